"""Files in, facts out: coordinate systems, inspection, rendering. Knows nothing of the database."""
