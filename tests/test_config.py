"""Settings that are worked out rather than given."""

from __future__ import annotations

import pytest

from catalogue_app.config import MAX_READ_THREADS, available_cores, load_settings


def test_reader_threads_share_the_cores_among_the_workers(tmp_path):
    cores = available_cores()
    one = load_settings(environ={}, data_dir=tmp_path)
    assert one.read_threads == 0
    assert one.reader_threads == max(1, min(MAX_READ_THREADS, cores))
    many = load_settings(environ={"CATALOGUE_WORKERS": str(cores + 1)}, data_dir=tmp_path)
    assert many.reader_threads == 1


def test_reader_threads_as_given(tmp_path):
    assert load_settings(environ={"CATALOGUE_READ_THREADS": "6"}, data_dir=tmp_path).reader_threads == 6
    with pytest.raises(SystemExit):
        load_settings(environ={"CATALOGUE_READ_THREADS": "-1"}, data_dir=tmp_path)
