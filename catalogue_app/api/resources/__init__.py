"""The resource families: lists, details, changes, uploads, jobs, links and views of resources."""
