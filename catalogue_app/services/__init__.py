"""The rules of the catalogue, free of HTTP: called by the API, the jobs and the command line."""
