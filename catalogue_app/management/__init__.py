"""The operator's commands: the same code behind ``/api/v2/management/`` (GeoNode's management
commands over HTTP) and ``catalogue <command>`` on the command line. See base.py for what a
command is, registry.py for which there are, runner.py for how jobs of them run."""
