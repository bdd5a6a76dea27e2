"""The web UI: static pages, ES modules and styles, served by the app at `/` (this file lets
Python's packaging ship the folder inside the wheel and the executable)."""
