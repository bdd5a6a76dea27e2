"""Administration: upload limits, harvesting, management commands, publishing to remotes."""
