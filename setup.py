"""Packaging beyond what pyproject.toml can say: the web UI lives in the top-level ui/ folder
and is installed as the package `catalogue_ui`, beside `catalogue_app`."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["catalogue_app", "catalogue_app.*"]) + ["catalogue_ui"],
    package_dir={"catalogue_ui": "ui"},
)
