"""The map renderer on its own: vector layers (fills, holes, overlaps, lines, marks, tiny parts,
deep zooms, reprojection), SLD styles, rasters (RGB, grey, nodata), formats, the layer cache and
legends, drawn from real files."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import numpy as np
import pyogrio.raw
import pytest
import shapely
from PIL import Image

from catalogue_app.geo import symbolizers
from catalogue_app.geo.layer_cache import LayerCache
from catalogue_app.geo.legend import legend_png
from catalogue_app.geo.render import MapLayer, render_map

DATA = Path(__file__).parent.parent / "data"
COUNTRIES = str(DATA / "naturalearth_lowres" / "naturalearth_lowres.shp")
CITIES = str(DATA / "naturalearth_cities" / "naturalearth_cities.shp")
WHITE = (255, 255, 255)
DEFAULT_FILL = (0xD6, 0xD0, 0xC4)
MERCATOR = 20037508.342789244


def gpkg(path: Path, geoms: list, crs: str = "EPSG:4326") -> str:
    wkb = shapely.to_wkb(np.asarray(geoms, dtype=object))
    kind = shapely.get_type_id(geoms[0])
    name = {0: "Point", 1: "LineString", 3: "Polygon", 6: "MultiPolygon"}[int(kind)]
    pyogrio.raw.write(path, wkb, field_data=[np.arange(len(geoms))], fields=["id"], geometry_type=name, crs=crs,
                      driver="GPKG")
    return str(path)


def draw(layers, bbox, crs="EPSG:4326", size=(100, 100), **kw) -> Image.Image:
    """The map, as RGBA when transparent, else RGB (PNGs may come indexed)."""
    img = Image.open(io.BytesIO(render_map(layers, bbox, crs, size[0], size[1], **kw)))
    assert img.format == ("JPEG" if kw.get("image_format") == "image/jpeg" else "PNG")
    return img.convert("RGBA" if kw.get("transparent") and img.format == "PNG" else "RGB")


def sld(symbolizer: str, se: bool = False) -> bytes:
    if se:
        return (f'<StyledLayerDescriptor version="1.1.0" xmlns="http://www.opengis.net/sld" '
                f'xmlns:se="http://www.opengis.net/se"><NamedLayer><UserStyle><se:FeatureTypeStyle><se:Rule>'
                f'{symbolizer}</se:Rule></se:FeatureTypeStyle></UserStyle></NamedLayer></StyledLayerDescriptor>').encode()
    return (f'<StyledLayerDescriptor version="1.0.0" xmlns="http://www.opengis.net/sld" '
            f'xmlns:ogc="http://www.opengis.net/ogc"><NamedLayer><UserStyle><FeatureTypeStyle><Rule>{symbolizer}'
            f'</Rule></FeatureTypeStyle></UserStyle></NamedLayer></StyledLayerDescriptor>').encode()


RED_FILL = sld('<PolygonSymbolizer><Fill><CssParameter name="fill">#ff0000</CssParameter></Fill></PolygonSymbolizer>')


def at(img: Image.Image, x: float, y: float, bbox) -> tuple:
    """The pixel at map coordinates (x, y)."""
    w, h = img.size
    col = int((x - bbox[0]) / (bbox[2] - bbox[0]) * w)
    row = int((bbox[3] - y) / (bbox[3] - bbox[1]) * h)
    return img.getpixel((col, row))


# --- vectors -------------------------------------------------------------------------------------


def test_countries_default_style_in_epsg4326():
    box = (-180, -90, 180, 90)
    png = Image.open(io.BytesIO(render_map([MapLayer(COUNTRIES, "vector", "EPSG:4326")], box, "EPSG:4326", 72, 36)))
    assert png.mode == "P"  # three plain colours: an indexed PNG
    img = draw([MapLayer(COUNTRIES, "vector", "EPSG:4326")], box, size=(720, 360))
    assert img.size == (720, 360)
    assert at(img, 22, 2, box) == DEFAULT_FILL       # central Africa
    assert at(img, -52, -10, box) == DEFAULT_FILL    # Brazil
    assert at(img, -150, 0, box) == WHITE            # Pacific


def test_countries_in_web_mercator_reach_the_bottom():
    box = (-MERCATOR, -MERCATOR, MERCATOR, MERCATOR)
    img = draw([MapLayer(COUNTRIES, "vector", "EPSG:4326")], box, "EPSG:3857", (256, 256))
    assert img.getpixel((128, 254)) == DEFAULT_FILL  # Antarctica, cut at the map's edge
    assert img.getpixel((20, 128)) == WHITE          # Pacific at the equator


def test_hole_stays_empty_and_overlaps_stay_filled(tmp_path):
    donut = shapely.Polygon([(0, 0), (10, 0), (10, 10), (0, 10)], [[(4, 4), (6, 4), (6, 6), (4, 6)]])
    clockwise = shapely.Polygon([(12, 0), (12, 10), (22, 10), (22, 0)])    # exterior clockwise
    anticlockwise = shapely.Polygon([(17, 2), (27, 2), (27, 8), (17, 8)])  # overlaps it
    path = gpkg(tmp_path / "shapes.gpkg", [donut, clockwise, anticlockwise])
    box = (-1, -1, 29, 11)
    img = draw([MapLayer(path, "vector", "EPSG:4326", RED_FILL)], box, size=(300, 120))
    red = (255, 0, 0)
    assert at(img, 2, 2, box) == red
    assert at(img, 5, 5, box) == WHITE  # the hole
    assert at(img, 19.5, 5, box) == red  # the overlap
    assert at(img, 14, 1, box) == red and at(img, 25, 3, box) == red
    assert at(img, 11, 5, box) == WHITE


def test_outline_width_and_opacity(tmp_path):
    path = gpkg(tmp_path / "square.gpkg", [shapely.box(0, 0, 10, 10)])
    style = sld('<PolygonSymbolizer><Fill><CssParameter name="fill">#ff0000</CssParameter>'
                '<CssParameter name="fill-opacity">0.5</CssParameter></Fill>'
                '<Stroke><CssParameter name="stroke">#0000ff</CssParameter>'
                '<CssParameter name="stroke-width">4</CssParameter></Stroke></PolygonSymbolizer>')
    box = (-5, -5, 15, 15)
    img = draw([MapLayer(path, "vector", "EPSG:4326", style)], box, size=(200, 200))
    r, g, b = at(img, 5, 5, box)
    assert r == 255 and 120 < g < 136 and 120 < b < 136  # half red over white
    row = np.asarray(img)[100]
    blue = np.flatnonzero((row == (0, 0, 255)).all(axis=1))
    assert len(blue) == 8  # two edges, 4 pixels each


def test_lines_and_line_width(tmp_path):
    path = gpkg(tmp_path / "lines.gpkg", [shapely.LineString([(0, 5), (10, 5)]), shapely.LineString([(5, 0), (5, 10)])])
    style = sld('<LineSymbolizer><Stroke><CssParameter name="stroke">#00ff00</CssParameter>'
                '<CssParameter name="stroke-width">3</CssParameter></Stroke></LineSymbolizer>')
    box = (0, 0, 10, 10)
    img = np.asarray(draw([MapLayer(path, "vector", "EPSG:4326", style)], box, size=(100, 100)))
    green = (img == (0, 255, 0)).all(axis=2)
    assert green[:, 20].sum() == 3 and green[80, :].sum() == 3
    assert green[50, 0] and green[50, 99] and green[0, 50] and green[99, 50]  # from end to end
    assert not green[10, 10]


@pytest.mark.parametrize("shape", symbolizers.SHAPES)
def test_point_marks(tmp_path, shape):
    path = gpkg(tmp_path / "points.gpkg", [shapely.Point(2, 2), shapely.Point(8, 8)])
    style = sld(f'<PointSymbolizer><Graphic><Mark><WellKnownName>{shape}</WellKnownName>'
                '<Fill><CssParameter name="fill">#ff00ff</CssParameter></Fill></Mark><Size>12</Size></Graphic>'
                '</PointSymbolizer>')
    box = (0, 0, 10, 10)
    img = draw([MapLayer(path, "vector", "EPSG:4326", style)], box, size=(100, 100), transparent=True)
    assert at(img, 2, 2, box) == (255, 0, 255, 255)
    assert at(img, 8.05, 7.95, box) == (255, 0, 255, 255)
    assert at(img, 5, 5, box)[3] == 0
    drawn = (np.asarray(img)[:, :, 3] > 0).sum()
    assert 2 * 20 < drawn < 2 * 14 * 14


def test_cities_default_marks_over_countries():
    box = (-180, -90, 180, 90)
    layers = [MapLayer(COUNTRIES, "vector", "EPSG:4326"), MapLayer(CITIES, "vector", "EPSG:4326")]
    both = np.asarray(draw(layers, box, size=(720, 360)))
    alone = np.asarray(draw(layers[:1], box, size=(720, 360)))
    col, row = int((2.35 + 180) * 2), int((90 - 48.86) * 2)  # Paris
    assert tuple(both[row, col]) == (0x7F, 0x9C, 0x96)
    assert (both != alone).any(axis=2).sum() > 243 * 20


def test_many_tiny_polygons_become_pixels(tmp_path):
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-170, 170, 20000), rng.uniform(-80, 80, 20000)
    boxes = shapely.box(x, y, x + 0.05, y + 0.05)
    path = gpkg(tmp_path / "tiny.gpkg", list(boxes))
    layer = MapLayer(path, "vector", "EPSG:4326", RED_FILL)
    img = np.asarray(draw([layer], (-180, -90, 180, 90), size=(360, 180)))
    red = (img == (255, 0, 0)).all(axis=2)
    assert 15000 < red.sum() <= 20000 * 4
    start = time.process_time()
    draw([layer], (-180, -90, 180, 90), size=(512, 512))
    assert time.process_time() - start < 1.0


def test_deep_zoom_inside_a_polygon_is_filled_fast(tmp_path):
    path = gpkg(tmp_path / "big.gpkg", [shapely.box(-170, -80, 170, 80).segmentize(1)])
    layer = MapLayer(path, "vector", "EPSG:4326", RED_FILL)
    start = time.process_time()
    img = np.asarray(draw([layer], (10.0, 10.0, 10.0001, 10.0001), size=(256, 256)))
    assert (img == (255, 0, 0)).all()
    # an edge far outside, crossing the map
    img = np.asarray(draw([layer], (169.99999, 0.0, 170.00001, 0.00002), size=(256, 256)))
    assert (img[:, :100] == (255, 0, 0)).all() and (img[:, 156:] == WHITE).all()
    assert time.process_time() - start < 1.0


def test_reprojected_layer_in_a_utm_crs(tmp_path):
    path = gpkg(tmp_path / "utm.gpkg", [shapely.box(500000, 4000000, 510000, 4010000)], crs="EPSG:32632")
    layer = MapLayer(path, "vector", "EPSG:32632", RED_FILL)
    # the same square seen in lon/lat (around 9E, 36.1N)
    box = (8.9, 36.0, 9.2, 36.3)
    img = draw([layer], box, size=(300, 300))
    assert at(img, 9.05, 36.18, box) == (255, 0, 0)
    assert at(img, 8.95, 36.05, box) == WHITE


@pytest.mark.parametrize("crs, box", [("EPSG:3031", (-5e6, -5e6, 5e6, 5e6)), ("EPSG:32618", (-2e7, -1e7, 2e7, 1e7)),
                                      ("EPSG:3857", (1.9e7, -1e6, 2.1e7, 1e6))])
def test_world_in_crs_that_cannot_hold_all_of_it(crs, box):
    """Points a CRS cannot hold are left out; the rest is drawn, without errors."""
    img = np.asarray(draw([MapLayer(COUNTRIES, "vector", "EPSG:4326")], box, crs, (128, 128)))
    assert img.shape == (128, 128, 3)
    if crs == "EPSG:3031":  # Antarctica fills the middle of the south polar view
        assert tuple(img[60, 70]) == DEFAULT_FILL and tuple(img[63, 63]) == DEFAULT_FILL


# --- styles --------------------------------------------------------------------------------------


def test_sld_10_and_se_11_read_alike():
    css = sld('<PolygonSymbolizer><Fill><CssParameter name="fill">#123456</CssParameter>'
              '<CssParameter name="fill-opacity">0.5</CssParameter></Fill></PolygonSymbolizer>')
    svg = sld('<se:PolygonSymbolizer><se:Fill><se:SvgParameter name="fill">#123456</se:SvgParameter>'
              '<se:SvgParameter name="fill-opacity">0.5</se:SvgParameter></se:Fill></se:PolygonSymbolizer>', se=True)
    assert symbolizers.parse_sld(css) == symbolizers.parse_sld(svg) == (
        symbolizers.PolygonSymbol((0x12, 0x34, 0x56, 128), None, 1.0),)


def test_rules_with_filters_and_unreadable_styles():
    doc = (b'<StyledLayerDescriptor xmlns="http://www.opengis.net/sld" xmlns:ogc="http://www.opengis.net/ogc">'
           b'<NamedLayer><UserStyle><FeatureTypeStyle>'
           b'<Rule><ogc:Filter><ogc:PropertyIsEqualTo><ogc:PropertyName>a</ogc:PropertyName><ogc:Literal>1'
           b'</ogc:Literal></ogc:PropertyIsEqualTo></ogc:Filter><LineSymbolizer><Stroke><CssParameter name="stroke">'
           b'#ff0000</CssParameter></Stroke></LineSymbolizer></Rule>'
           b'<Rule><LineSymbolizer><Stroke><CssParameter name="stroke">#00ff00</CssParameter></Stroke>'
           b'</LineSymbolizer></Rule></FeatureTypeStyle></UserStyle></NamedLayer></StyledLayerDescriptor>')
    assert symbolizers.parse_sld(doc) == (symbolizers.LineSymbol((0, 255, 0, 255), 1.0),)
    only_filtered = doc.replace(b"<Rule><LineSymbolizer>", b"<Rule><ogc:Filter/><LineSymbolizer>")
    assert symbolizers.parse_sld(only_filtered) == (symbolizers.LineSymbol((255, 0, 0, 255), 1.0),)
    assert symbolizers.parse_sld(b"<not-sld") == ()
    # nothing for the layer's geometries: the default of its type
    defaults = symbolizers.vector_symbols(b"garbage", ["point"])
    assert [type(s) for s, _ in defaults] == [symbolizers.PointSymbol]
    assert symbolizers.vector_symbols(doc, ["point"]) == defaults


def test_unreadable_style_falls_back_to_the_default():
    box = (-180, -90, 180, 90)
    img = draw([MapLayer(COUNTRIES, "vector", "EPSG:4326", b"<oops")], box, size=(360, 180))
    assert at(img, 22, 2, box) == DEFAULT_FILL


# --- rasters -------------------------------------------------------------------------------------


def test_rgb_raster_with_nodata_clear():
    import rasterio

    with rasterio.open(DATA / "RGB.byte.tif") as ds:
        b, src = ds.bounds, ds.read()
        size = (ds.width, ds.height)
    box = (b.left, b.bottom, b.right, b.top)
    img = np.asarray(draw([MapLayer(str(DATA / "RGB.byte.tif"), "raster", "EPSG:32618")], box, "EPSG:32618", size,
                          transparent=True))
    assert img[0, 0, 3] == 0
    assert (img[300:310, 300:310, :3] == src[:, 300:310, 300:310].transpose(1, 2, 0)).all()


def test_rgb_raster_in_web_mercator_on_a_colour():
    box = (-8600000, 2700000, -8400000, 3000000)
    img = np.asarray(draw([MapLayer(str(DATA / "RGB.byte.tif"), "raster", "EPSG:32618")], box, "EPSG:3857",
                          (200, 300), bgcolor=(0, 0, 255)))
    blue = (img == (0, 0, 255)).all(axis=2)
    assert 0.05 < blue.mean() < 0.95  # the raster covers part of it, the rest is the background


def test_grey_raster_stretched_and_nodata():
    import rasterio

    path = str(DATA / "float_raster_with_nodata.tif")
    with rasterio.open(path) as ds:
        b, data, nodata, crs = ds.bounds, ds.read(1), ds.nodata, ds.crs.to_wkt()
    box = (b.left, b.bottom, b.right, b.top)
    img = np.asarray(draw([MapLayer(path, "raster", crs)], box, crs, (13 * 4, 12 * 4), transparent=True))
    valid = data != nodata
    grey = img[::4, ::4]
    assert (grey[~valid][:, 3] == 0).all() and (grey[valid][:, 3] == 255).all()
    assert (grey[:, :, 0] == grey[:, :, 1]).all()
    values = data[valid]
    lo, hi = np.unravel_index(np.argmin(np.where(valid, data, np.inf)), data.shape), \
        np.unravel_index(np.argmax(np.where(valid, data, -np.inf)), data.shape)
    assert grey[lo][0] == 0 and grey[hi][0] == 255 and values.min() < values.max()


def test_paletteless_byte_raster_keeps_its_values():
    import rasterio

    with rasterio.open(DATA / "world.byte.tif") as ds:
        value = ds.read(1, window=((600, 601), (1440, 1441)))[0, 0]
    box = (-180, -75, 180, 75)
    img = draw([MapLayer(str(DATA / "world.byte.tif"), "raster", "EPSG:4326")], box, size=(2880, 1200))
    assert img.getpixel((1440, 600)) == (value, value, value)


# --- formats, errors, cache, legends -------------------------------------------------------------


def test_jpeg_and_bad_inputs():
    layer = MapLayer(COUNTRIES, "vector", "EPSG:4326")
    jpeg = draw([layer], (-180, -90, 180, 90), size=(64, 32), image_format="image/jpeg", transparent=True)
    assert jpeg.size == (64, 32)
    for bbox, crs, size, fmt in [((0, 0, 0, 1), "EPSG:4326", 10, "image/png"), ((0, 0, 1, 1), "EPSG:4326", 0, "image/png"),
                                 ((0, 0, 1, 1), "EPSG:0", 10, "image/png"), ((0, 0, 1, 1), "EPSG:4326", 10, "image/gif"),
                                 ((0, float("nan"), 1, 1), "EPSG:4326", 10, "image/png")]:
        with pytest.raises(ValueError):
            render_map([layer], bbox, crs, size, size, fmt)


def test_layer_cache_reads_a_replaced_file_and_stays_bounded(tmp_path):
    path = gpkg(tmp_path / "one.gpkg", [shapely.box(0, 0, 1, 1)])
    cache = LayerCache(limit=10_000_000)
    assert cache.geometries(path, "EPSG:4326", "EPSG:4326").polygon.count == 1
    os.remove(path)
    gpkg(tmp_path / "one.gpkg", [shapely.box(0, 0, 1, 1), shapely.box(2, 2, 3, 3)])
    os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    assert cache.geometries(path, "EPSG:4326", "EPSG:4326").polygon.count == 2
    projected = cache.geometries(path, "EPSG:4326", "EPSG:3857")
    assert projected.polygon.bounds[1][2] == pytest.approx(3 / 180 * MERCATOR)
    small = LayerCache(limit=2000)
    for i in range(5):
        other = gpkg(tmp_path / f"l{i}.gpkg", [shapely.box(0, 0, 1, 1).segmentize(0.01)])
        small.geometries(other, "EPSG:4326", "EPSG:4326")
        assert small.nbytes <= 2000 or len(small._layers) == 1


@pytest.mark.parametrize("kind", ["polygon", "line", "point", "raster"])
def test_legend_images(kind):
    img = Image.open(io.BytesIO(legend_png(None, kind, 24, 16)))
    assert img.format == "PNG" and img.size == (24, 16)
    assert (np.asarray(img.convert("RGBA"))[:, :, 3] > 0).sum() > 10
    with pytest.raises(ValueError):
        legend_png(None, kind, 0, 10)


# --- limits --------------------------------------------------------------------------------------


def point_style(size: float, stroke_width: float = 1) -> bytes:
    return sld('<PointSymbolizer><Graphic><Mark><WellKnownName>circle</WellKnownName>'
               '<Fill><CssParameter name="fill">#ff00ff</CssParameter></Fill>'
               f'<Stroke><CssParameter name="stroke">#000000</CssParameter><CssParameter name="stroke-width">'
               f'{stroke_width}</CssParameter></Stroke></Mark><Size>{size}</Size></Graphic></PointSymbolizer>')


def test_mark_size_and_stroke_width_are_clamped():
    (mark,) = symbolizers.parse_sld(point_style(256, 100))
    assert mark.size == symbolizers.MAX_MARK == 64 and mark.width == symbolizers.MAX_STROKE == 32
    line = sld('<LineSymbolizer><Stroke><CssParameter name="stroke">#00ff00</CssParameter>'
               '<CssParameter name="stroke-width">100</CssParameter></Stroke></LineSymbolizer>')
    assert symbolizers.parse_sld(line) == (symbolizers.LineSymbol((0, 255, 0, 255), 32.0),)


def test_wide_lines_are_drawn_exactly_and_fast(tmp_path):
    path = gpkg(tmp_path / "lines.gpkg", [shapely.LineString([(0, 5), (10, 5)]), shapely.LineString([(5, 0), (5, 10)])])
    style = sld('<LineSymbolizer><Stroke><CssParameter name="stroke">#00ff00</CssParameter>'
                '<CssParameter name="stroke-width">100</CssParameter></Stroke></LineSymbolizer>')
    box = (0, 0, 10, 10)
    img = np.asarray(draw([MapLayer(path, "vector", "EPSG:4326", style)], box, size=(100, 100)))
    green = (img == (0, 255, 0)).all(axis=2)
    assert green[:, 10].sum() == 32 and green[90, :].sum() == 32  # clamped to 32 pixels
    assert green[50, 0] and green[50, 99] and not green[10, 10]
    start = time.process_time()
    render_map([MapLayer(COUNTRIES, "vector", "EPSG:4326", style)], (-180, -90, 180, 90), "EPSG:4326", 2048, 2048)
    assert time.process_time() - start < 3.0


def test_many_large_marks_are_drawn_in_bounded_time(tmp_path):
    rng = np.random.default_rng(5)
    x, y = rng.uniform(-180, 180, 60000), rng.uniform(-90, 90, 60000)
    path = gpkg(tmp_path / "points.gpkg", list(shapely.points(x, y)))
    box = (-180, -90, 180, 90)
    for size, stroke in ((16, 1), (256, 100)):
        layer = MapLayer(path, "vector", "EPSG:4326", point_style(size, stroke))
        render_map([layer], box, "EPSG:4326", 64, 64)  # loads the layer
        start = time.process_time()
        img = np.asarray(draw([layer], box, size=(2048, 2048)))
        assert time.process_time() - start < 6.0, size
        # every point is under a mark
        cols = np.clip(((x[:500] + 180) / 360 * 2048).astype(int), 0, 2047)
        rows = np.clip(((90 - y[:500]) / 180 * 2048).astype(int), 0, 2047)
        assert not (img[rows, cols] == WHITE).all(axis=1).any()


def test_a_style_draws_at_most_max_symbols():
    rule = ('<Rule><LineSymbolizer><Stroke><CssParameter name="stroke">#00ff00</CssParameter></Stroke>'
            '</LineSymbolizer></Rule>')
    doc = sld(rule * 150).replace(b"<Rule><Rule>", b"<Rule>").replace(b"</Rule></Rule>", b"</Rule>")
    assert len(symbolizers.parse_sld(doc)) == symbolizers.MAX_SYMBOLS == 100


def test_parsed_styles_are_kept_small_by_hash():
    big = sld('<LineSymbolizer><Stroke><CssParameter name="stroke">#00ff00</CssParameter></Stroke>'
              '</LineSymbolizer>' + "<!-- padding -->" * 5000)
    assert len(big) > symbolizers.MAX_SLD
    assert symbolizers.parse_sld(big) == (symbolizers.LineSymbol((0, 255, 0, 255), 1.0),)
    for i in range(100):
        symbolizers.parse_sld(RED_FILL + f"<!-- {i} -->".encode())
    assert len(symbolizers._PARSED) <= 32
    assert all(len(key) <= 32 for key in symbolizers._PARSED)  # hashes, not documents


def test_readable_styles():
    assert symbolizers.readable(RED_FILL)
    for bad in (b"<oops", b"<sld/>", b"", b"not xml at all"):
        assert not symbolizers.readable(bad), bad


def test_box_with_overflowing_width_is_refused():
    layer = MapLayer(COUNTRIES, "vector", "EPSG:4326")
    raster = MapLayer(str(DATA / "RGB.byte.tif"), "raster", "EPSG:32618")
    for box in [(-1e308, -1e308, 1e308, 1e308), (-1e308, 0, 1e308, 1), (0, 0, 1e-300, 1e-300)]:
        for one in (layer, raster):
            with pytest.raises(ValueError):
                render_map([one], box, "EPSG:4326", 64, 64)


def test_map_crs_must_be_2d_projected_or_geographic():
    from catalogue_app.geo import map_crs

    for good in ("EPSG:4326", "CRS:84", "EPSG:3857", "EPSG:32618", "EPSG:3031", "EPSG:900913"):
        assert map_crs.is_map_crs(good), good
    for bad in ("EPSG:5773", "EPSG:4979", "EPSG:4978", "EPSG:7405", "EPSG:999999"):
        assert not map_crs.is_map_crs(bad), bad


def test_raster_read_from_overviews_within_a_budget(tmp_path, monkeypatch):
    import rasterio
    from rasterio.enums import Resampling
    from rasterio.transform import from_origin

    from catalogue_app.geo import raster_render

    data = (np.indices((2048, 2048)).sum(axis=0) % 251).astype("uint8")
    profile = dict(driver="GTiff", width=2048, height=2048, count=1, dtype="uint8", crs="EPSG:32632",
                   transform=from_origin(500000, 5200000, 10, 10), tiled=True, blockxsize=256, blockysize=256)
    plain, pyramid = str(tmp_path / "plain.tif"), str(tmp_path / "pyramid.tif")
    for path in (plain, pyramid):
        with rasterio.open(path, "w", **profile) as out:
            out.write(data, 1)
    with rasterio.open(pyramid, "r+") as ds:
        ds.build_overviews([2, 4, 8], Resampling.nearest)
    box = (500000, 5200000 - 20480, 520480, 5200000)
    # 4 MB of values are not allowed, the overview needs 64 KB: only the raster with overviews is drawn
    monkeypatch.setattr(raster_render, "MAX_READ_BYTES", 1024 * 1024)
    img = np.asarray(draw([MapLayer(pyramid, "raster", "EPSG:32632")], box, "EPSG:32632", (256, 256)))
    assert (img != WHITE).any(axis=2).mean() > 0.5
    with pytest.raises(ValueError):
        render_map([MapLayer(plain, "raster", "EPSG:32632")], box, "EPSG:32632", 256, 256)
    # a close view reads the full resolution
    small = (500000, 5200000 - 2560, 502560, 5200000)
    img = np.asarray(draw([MapLayer(plain, "raster", "EPSG:32632")], small, "EPSG:32632", (256, 256)))
    assert tuple(img[10, 20]) == (data[10, 20],) * 3


def test_a_vanished_file_raises_file_not_found(tmp_path):
    for name, kind in (("gone.gpkg", "vector"), ("gone.tif", "raster")):
        path = str(tmp_path / name)
        with pytest.raises(FileNotFoundError) as caught:
            render_map([MapLayer(path, kind, "EPSG:4326")], (-180, -90, 180, 90), "EPSG:4326", 64, 32)
        assert caught.value.filename == path


def test_layer_cache_counts_shared_arrays_once_and_keeps_what_is_used(tmp_path):
    path = gpkg(tmp_path / "one.gpkg", [shapely.box(0, 0, 10, 10).segmentize(0.001)])
    cache = LayerCache(limit=100_000_000)
    native = cache.geometries(path, "EPSG:4326", "EPSG:4326")
    projected = cache.geometries(path, "EPSG:4326", "EPSG:3857")
    assert projected.polygon.ring_start is native.polygon.ring_start  # shared
    assert native.nbytes < cache.nbytes < native.nbytes + projected.nbytes
    # too small for a native and a projected copy: the projection asked for stays, and so does the layer
    tight = LayerCache(limit=int(native.nbytes * 1.5))
    tight.geometries(path, "EPSG:4326", "EPSG:4326")
    again = tight.geometries(path, "EPSG:4326", "EPSG:3857")
    assert again.polygon.bounds[0][2] == pytest.approx(10 / 180 * MERCATOR)
    assert len(tight._layers) == 1
    # derived copies leave before whole layers do
    other = gpkg(tmp_path / "two.gpkg", [shapely.box(0, 0, 10, 10).segmentize(0.001)])
    roomy = LayerCache(limit=int(native.nbytes * 2.5))
    roomy.geometries(path, "EPSG:4326", "EPSG:3857")
    roomy.geometries(other, "EPSG:4326", "EPSG:4326")
    assert len(roomy._layers) == 2
    first = next(iter(roomy._layers.values()))
    assert not first.projected
    # files up to a quarter of the limit are held
    size = os.path.getsize(path)
    assert LayerCache(limit=size * 4).fits(path) and not LayerCache(limit=size * 4 - 8).fits(path)


def test_layer_cache_derives_a_projection_once_for_concurrent_maps(tmp_path, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from catalogue_app.geo import map_crs

    path = gpkg(tmp_path / "one.gpkg", [shapely.box(0, 0, 10, 10).segmentize(0.01)])
    cache = LayerCache(limit=100_000_000)
    cache.geometries(path, "EPSG:4326", "EPSG:4326")
    calls = []
    plain = map_crs.transform_xy

    def slow(x, y, source, target):
        calls.append(target)
        time.sleep(0.2)
        return plain(x, y, source, target)

    monkeypatch.setattr(map_crs, "transform_xy", slow)
    with ThreadPoolExecutor(8) as pool:
        found = list(pool.map(lambda _: cache.geometries(path, "EPSG:4326", "EPSG:3857", 1000.0), range(8)))
    assert calls == ["EPSG:3857"]
    assert all(f is found[0] for f in found)


# --- opacity (a map's layers) ----------------------------------------------------------------------


def test_a_see_through_layer_blends_with_what_is_below():
    box = (0, 40, 20, 52)  # France and around
    full = draw([MapLayer(COUNTRIES, "vector", "EPSG:4326", RED_FILL)], box)
    half = draw([MapLayer(COUNTRIES, "vector", "EPSG:4326", RED_FILL, opacity=0.5)], box)
    none = draw([MapLayer(COUNTRIES, "vector", "EPSG:4326", RED_FILL, opacity=0.0)], box)
    assert at(full, 2.5, 46.5, box) == (255, 0, 0)
    r, g, b = at(half, 2.5, 46.5, box)
    assert r == 255 and 120 <= g <= 135 and 120 <= b <= 135  # half red over white
    assert at(none, 2.5, 46.5, box) == WHITE


def test_a_see_through_layer_over_a_transparent_map_keeps_its_alpha():
    box = (0, 40, 20, 52)
    img = draw([MapLayer(COUNTRIES, "vector", "EPSG:4326", RED_FILL, opacity=0.4)], box, transparent=True)
    r, g, b, a = at(img, 2.5, 46.5, box)
    assert (r, g, b) == (255, 0, 0) and 95 <= a <= 110
