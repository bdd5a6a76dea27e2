"""geo.coverage: windows of a tiled GeoTIFF with overviews, at other sizes and in other CRSs,
written as GeoTIFF bytes."""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np
import pytest
import rasterio
import rasterio.warp
from rasterio.enums import ColorInterp, Resampling
from rasterio.io import MemoryFile
from rasterio.transform import from_origin
from rasterio.windows import Window

from catalogue_app.geo import coverage as cv

ORIGIN = (500000.0, 5000000.0)
PIXEL = 10.0


def write_raster(path, width, height, count=1, dtype="uint8", nodata=0, crs="EPSG:32632", overviews=(2, 4, 8)):
    """A tiled deflate GeoTIFF with overviews, like a working copy, holding smooth waves."""
    yy, xx = np.mgrid[0:height, 0:width]
    bands = []
    for n in range(count):
        wave = (np.sin(xx / (40 + 10 * n)) + np.cos(yy / 55)) * 60 + 128
        bands.append(wave.astype(dtype))
    data = np.stack(bands)
    if nodata is not None:
        data[:, :5, :5] = nodata  # a corner without data
    profile = dict(driver="GTiff", width=width, height=height, count=count, dtype=dtype, crs=crs,
                   transform=from_origin(*ORIGIN, PIXEL, PIXEL), nodata=nodata, tiled=True, blockxsize=256,
                   blockysize=256, compress="deflate")
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(data)
        if count == 3:
            ds.colorinterp = (ColorInterp.red, ColorInterp.green, ColorInterp.blue)
        if overviews:
            ds.build_overviews(list(overviews), Resampling.average)
    return path


@pytest.fixture(scope="module")
def rgb(tmp_path_factory):
    return write_raster(tmp_path_factory.mktemp("cov") / "rgb.tif", 1200, 1000, count=3)


@pytest.fixture(scope="module")
def floats(tmp_path_factory):
    return write_raster(tmp_path_factory.mktemp("cov") / "float.tif", 300, 200, dtype="float32", nodata=-9999.0)


@contextmanager
def opened(data: bytes):
    with MemoryFile(data) as memory, memory.open() as ds:
        yield ds


def source(path, window=None, level=None):
    kw = {} if level is None else {"overview_level": level}
    with rasterio.open(path, **kw) as ds:
        return ds.read(window=window)


def test_grid_describes_size_bands_and_overviews(rgb, floats):
    grid = cv.grid_of(rgb)
    assert (grid.width, grid.height) == (1200, 1000)
    assert grid.bounds == (ORIGIN[0], ORIGIN[1] - 10000, ORIGIN[0] + 12000, ORIGIN[1])
    assert [b.name for b in grid.bands] == ["RED_BAND", "GREEN_BAND", "BLUE_BAND"]
    assert grid.bands[0].dtype == "uint8" and (grid.bands[0].low, grid.bands[0].high) == (0, 255)
    assert grid.overviews == (2, 4, 8)
    assert grid.pixel_box(10, 20, 30, 40) == (ORIGIN[0] + 100, ORIGIN[1] - 400, ORIGIN[0] + 300, ORIGIN[1] - 200)
    band = cv.grid_of(floats).bands[0]
    assert (band.name, band.dtype, band.nodata) == ("GRAY_INDEX", "float32", -9999.0)


def test_axes_follow_the_crs_order():
    assert [(a.label, a.is_x, a.uom) for a in cv.axes("EPSG:4326")] == [("Lat", False, "deg"), ("Long", True, "deg")]
    assert [(a.label, a.is_x, a.uom) for a in cv.axes("EPSG:32632")] == [("E", True, "m"), ("N", False, "m")]
    assert [a.is_x for a in cv.axes("EPSG:3035")] == [False, True]  # northing first
    with pytest.raises(cv.CoverageError) as caught:
        cv.axes("EPSG:99999")
    assert caught.value.reason == "crs"


def test_a_window_in_the_native_crs_is_the_source_pixels(rgb):
    # a box on pixel edges: columns 100..349, rows 50..249
    box = (ORIGIN[0] + 1000, ORIGIN[1] - 2500, ORIGIN[0] + 3500, ORIGIN[1] - 500)
    with opened(cv.coverage_tiff(rgb, box=box)) as out:
        assert (out.width, out.height, out.count) == (250, 200, 3)
        assert out.crs.to_epsg() == 32632
        assert out.transform == from_origin(ORIGIN[0] + 1000, ORIGIN[1] - 500, PIXEL, PIXEL)
        assert out.nodata == 0
        assert tuple(out.colorinterp) == (ColorInterp.red, ColorInterp.green, ColorInterp.blue)
        assert np.array_equal(out.read(), source(rgb, Window(100, 50, 250, 200)))


def test_a_box_off_the_pixel_edges_takes_every_pixel_it_touches(rgb):
    box = (ORIGIN[0] + 1005, ORIGIN[1] - 2495, ORIGIN[0] + 3495.5, ORIGIN[1] - 504)
    cov = cv.read_coverage(rgb, box=box)
    assert cov.data.shape == (3, 200, 250)
    assert cov.transform.c == ORIGIN[0] + 1000 and cov.transform.f == ORIGIN[1] - 500
    assert np.array_equal(cov.data, source(rgb, Window(100, 50, 250, 200)))


def test_open_sides_and_clipping_to_the_coverage(rgb):
    # only the left side is given; the box runs past the right edge
    cov = cv.read_coverage(rgb, box=(ORIGIN[0] + 11000, None, ORIGIN[0] + 99999, None))
    assert cov.data.shape == (3, 1000, 100)
    assert np.array_equal(cov.data, source(rgb, Window(1100, 0, 100, 1000)))


def test_exact_boxes_fill_beyond_the_coverage_with_nodata(rgb):
    box = (ORIGIN[0] - 500, ORIGIN[1] - 1000, ORIGIN[0] + 500, ORIGIN[1])
    cov = cv.read_coverage(rgb, box=box, exact=True, size=(100, 100))
    assert cov.data.shape == (3, 100, 100)
    assert (cov.data[:, :, :50] == 0).all()
    assert np.array_equal(cov.data[:, :, 50:], source(rgb, Window(0, 0, 50, 100)))


def test_a_box_outside_or_upside_down_is_refused(rgb):
    with pytest.raises(cv.CoverageError) as caught:
        cv.read_coverage(rgb, box=(0, 0, 10, 10))
    assert caught.value.reason == "outside"
    with pytest.raises(cv.CoverageError) as caught:
        cv.read_coverage(rgb, box=(ORIGIN[0] + 500, None, ORIGIN[0] + 100, None))
    assert caught.value.reason == "outside"


def test_reprojection_covers_the_asked_area(rgb):
    native = (ORIGIN[0] + 1000, ORIGIN[1] - 3000, ORIGIN[0] + 4000, ORIGIN[1] - 1000)
    with opened(cv.coverage_tiff(rgb, box=native, out_crs="EPSG:4326")) as out:
        assert out.crs.to_epsg() == 4326
        lonlat = rasterio.warp.transform_bounds("EPSG:32632", "EPSG:4326", *native)
        assert out.bounds.left <= lonlat[0] + 1e-9 and out.bounds.right >= lonlat[2] - 1e-9
        assert out.bounds.bottom <= lonlat[1] + 1e-9 and out.bounds.top >= lonlat[3] - 1e-9
        assert 250 < out.width < 400 and 150 < out.height < 300
        data = out.read()
        assert (data > 0).mean() > 0.9  # filled, not empty


def test_a_box_in_another_crs_output_in_that_crs_is_that_box(rgb):
    lonlat = rasterio.warp.transform_bounds("EPSG:32632", "EPSG:4326", ORIGIN[0] + 2000, ORIGIN[1] - 6000,
                                            ORIGIN[0] + 6000, ORIGIN[1] - 2000)
    cov = cv.read_coverage(rgb, box=lonlat, box_crs="EPSG:4326", out_crs="EPSG:4326", size=(200, 150))
    assert cov.data.shape == (3, 150, 200)
    assert cov.transform.c == pytest.approx(lonlat[0]) and cov.transform.f == pytest.approx(lonlat[3])
    assert cov.transform.a * 200 == pytest.approx(lonlat[2] - lonlat[0])


def test_a_world_raster_in_web_mercator_stops_at_85_degrees(tmp_path):
    path = tmp_path / "world.tif"
    with rasterio.open(path, "w", driver="GTiff", width=360, height=180, count=1, dtype="uint8", crs="EPSG:4326",
                       transform=from_origin(-180, 90, 1, 1)) as ds:
        ds.write(np.full((1, 180, 360), 7, dtype="uint8"))
    cov = cv.read_coverage(path, out_crs="EPSG:3857")
    x0, y1 = cov.transform.c, cov.transform.f
    assert x0 == pytest.approx(-20037508.34) and y1 == pytest.approx(20048966.1)
    assert 200 < cov.data.shape[2] < 500 and (cov.data == 7).all()


def test_sizes_resolutions_and_scale_factors(rgb):
    assert cv.read_coverage(rgb, size=(300, 250)).data.shape == (3, 250, 300)
    assert cv.read_coverage(rgb, size=(300, None)).data.shape == (3, 1000, 300)  # the other axis is unscaled
    assert cv.read_coverage(rgb, resolution=(40.0, 50.0)).data.shape == (3, 200, 300)
    assert cv.read_coverage(rgb, scale=(0.5, 0.5)).data.shape == (3, 500, 600)
    cov = cv.read_coverage(rgb, size=(300, 250), resampling="bilinear")
    assert cov.transform == from_origin(*ORIGIN, 40, 40)


def test_downscaling_reads_the_overview(rgb):
    # a quarter of the size, nearest: exactly the pixels of the 4x overview
    cov = cv.read_coverage(rgb, scale=(0.25, 0.25))
    assert np.array_equal(cov.data, source(rgb, level=1))


def test_too_large_answers_are_refused_before_reading(rgb, floats):
    for path, size in ((rgb, (cv.MAX_SIDE + 1, 10)), (rgb, (10, 100000)), (floats, (cv.MAX_SIDE, cv.MAX_SIDE))):
        with pytest.raises(cv.CoverageError) as caught:
            cv.read_coverage(path, size=size)
        assert caught.value.reason == "size"
    for read in ({"scale": (1e-9, 1e-9)}, {"scale": (1e300, 1e300)}, {"resolution": (1e-320, 1e-320)},
                 {"box": (-1e308, -1e308, 1e308, 1e308), "exact": True}):
        with pytest.raises(cv.CoverageError) as caught:
            cv.read_coverage(rgb, **read)
        assert caught.value.reason == "size"


def test_float_bands_keep_their_type_and_nodata(floats):
    with opened(cv.coverage_tiff(floats, out_crs="EPSG:3857")) as out:
        assert out.dtypes == ("float32",) and out.nodata == -9999.0
        data = out.read(1)
        assert (data == -9999.0).any() and (data != -9999.0).mean() > 0.5
    with opened(cv.coverage_tiff(floats, box=(ORIGIN[0], ORIGIN[1] - 100, ORIGIN[0] + 100, ORIGIN[1]))) as out:
        assert np.array_equal(out.read(), source(floats, Window(0, 0, 10, 10)))
        assert (out.read(1)[:5, :5] == -9999.0).all()


def test_bands_are_chosen_by_index(rgb):
    cov = cv.read_coverage(rgb, box=(ORIGIN[0], ORIGIN[1] - 100, ORIGIN[0] + 100, ORIGIN[1]), bands=[3, 1])
    assert cov.names == ("BLUE_BAND", "RED_BAND")
    full = source(rgb, Window(0, 0, 10, 10))
    assert np.array_equal(cov.data, full[[2, 0]])
    with pytest.raises(cv.CoverageError) as caught:
        cv.read_coverage(rgb, bands=[4])
    assert caught.value.reason == "band"


def test_unknown_crs_is_refused(rgb):
    with pytest.raises(cv.CoverageError) as caught:
        cv.read_coverage(rgb, out_crs="EPSG:99999")
    assert caught.value.reason == "crs"


def test_a_512_window_costs_little_cpu(tmp_path):
    path = write_raster(tmp_path / "big.tif", 4000, 4000, overviews=(2, 4, 8, 16))
    box = (ORIGIN[0] + 10000, ORIGIN[1] - 15120, ORIGIN[0] + 15120, ORIGIN[1] - 10000)
    cv.coverage_tiff(path, box=box)  # warm caches
    times = {}
    for name, read in {"window": {"box": box}, "whole to 512": {"size": (512, 512)},
                       "whole to 512 in 4326": {"size": (512, 512), "out_crs": "EPSG:4326"}}.items():
        spent = []
        for _ in range(5):
            start = time.process_time()
            data = cv.coverage_tiff(path, **read)
            spent.append(time.process_time() - start)
        times[name] = sorted(spent)[2]
        with opened(data) as out:
            assert (out.width, out.height) == (512, 512)
    print({k: f"{v * 1000:.1f} ms" for k, v in times.items()})
    assert all(t < 0.5 for t in times.values()), times
