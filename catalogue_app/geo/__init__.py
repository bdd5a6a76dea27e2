"""Files in, facts out: coordinate systems, inspection, rendering. Knows nothing of the database."""

# The byte limit of the layer cache (geo.layer_cache), set by the app from its settings: here,
# so that the app can set it without importing that module, which loads numpy and shapely
# (a start has no need of them).
layer_cache_limit = 512 * 1024 * 1024
