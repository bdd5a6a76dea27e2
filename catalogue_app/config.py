"""The one Settings struct, filled from defaults, environment variables and command-line flags."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
import platformdirs

TRUE_WORDS = {"1", "true", "yes", "on", "y", "t"}
MAX_READ_THREADS = 4


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


class Settings(msgspec.Struct, kw_only=True):
    """Everything the server needs to know; one instance per process."""

    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 8000
    port_chosen: bool = False  # given by CATALOGUE_PORT or --port (else a taken 8000 moves on)
    workers: int = 1
    # Base of every absolute link in answers ("http://example.org/catalogue"); when empty,
    # links are built from the scheme and Host header of each request.
    public_url: str = ""
    enable_bulk_update: bool = False
    enable_patch_all: bool = False
    # Checks run before a user is deleted: "user_has_resources", "user_is_manager".
    user_deletion_rules: tuple[str, ...] = ("user_has_resources",)
    account_email_required: bool = True
    default_page_size: int = 10
    # Larger page_size values are clamped to this and the effective value is echoed.
    max_page_size: int = 10_000
    token_lifetime_seconds: int = 86_400
    # How long a browser sign-in (the catalogue_session cookie) lasts.
    session_lifetime_seconds: int = 14 * 86_400
    # How long a verified Basic credential is trusted without running the password KDF again.
    basic_auth_cache_seconds: int = 300
    max_request_body: int = 1024 * 1024 * 1024
    # Threads running jobs (permission changes, copies, deletes, uploads) in each server process.
    job_workers: int = 4
    # How often (seconds) each server process looks for harvesting that is asked for or due.
    harvest_tick_seconds: float = 5.0
    # Rasters larger than this are refused before a pixel is read (a small sparse file may
    # claim a huge grid).
    max_raster_side: int = 50_000
    max_raster_pixels: int = 1_000_000_000

    # Files an administrator puts here may be registered as resources (resources/ingest/...);
    # nothing outside it can be. Empty: the "import" folder of the data folder.
    import_dir: Path | None = None
    # Memory for the vector layers the WMS keeps ready to draw, per process.
    layer_cache_mb: int = 512
    # Memory for the tiles of OGC API - Tiles drawn lately, per process; 0 turns the cache off.
    tile_cache_mb: int = 64
    # Seconds without an edit of a dataset's data after which its thumbnail is drawn again.
    thumbnail_quiet_seconds: float = 10.0
    # Threads per process that run SQLite reads for the async handlers; 0: see reader_threads.
    read_threads: int = 0
    # Reads (GET, HEAD) that a worker works on at once; more wait their turn, writes never do
    # (api/middleware/admission.py). 0: no limit.
    reads_at_once: int = 4
    # The first administrator, made on the first start (an empty password: one is generated).
    admin_username: str = "admin"
    admin_password: str = ""
    admin_email: str = ""
    # The serving process a worker process belongs to (set by `catalogue serve` for its
    # workers, which end with it); 0 when there is none.
    server_pid: int = 0
    # The single executable: the launcher process that started this one, and its emptied
    # temporary folder; the folder is removed and the server stopped if the launcher is killed
    # (processes.follow_launcher).
    launcher_pid: int = 0
    launcher_tmp: str = ""
    # Field packages (catalogue_app/packages/): the fingerprints of the signing keys whose packages
    # are imported ("SHA256:..."; empty: any signer, and unsigned packages, are accepted), whether
    # exports are signed with this catalogue's key, and the disk space (MB) an import always
    # leaves free beside the room it needs.
    trusted_keys: tuple[str, ...] = ()
    sign_packages: bool = True
    package_reserve_mb: int = 64
    # The catalogue's publisher, which DCAT-AP requires of a catalogue (/dcat/catalog): a name, and
    # a web address and/or an e-mail address. Empty: the host of the base URL, and the base URL.
    publisher_name: str = ""
    publisher_url: str = ""
    publisher_email: str = ""

    @property
    def reader_threads(self) -> int:
        """``read_threads``, or when it is 0, the cores of the machine shared among the worker
        processes (at least 1, at most MAX_READ_THREADS). A reader thread past that adds no
        parallel SQLite work, only threads that take CPU time and the GIL from the event loop
        and the writer: with 2 workers on 2 cores, 4 reader threads each made writes three
        times slower under a mixed load (bench --only mixed) than 1 did, for the same rate of
        pages."""
        if self.read_threads:
            return self.read_threads
        return max(1, min(MAX_READ_THREADS, available_cores() // max(1, self.workers)))

    @property
    def database_path(self) -> Path:
        return self.data_dir / "catalogue.sqlite3"

    @property
    def files_dir(self) -> Path:
        """Resource files, one folder per resource uuid."""
        return self.data_dir / "files"

    @property
    def tmp_dir(self) -> Path:
        """Where jobs stage files before they move them into files/."""
        return self.data_dir / "tmp"

    @property
    def import_folder(self) -> Path:
        return Path(self.import_dir) if self.import_dir else self.data_dir / "import"

    @property
    def base_url(self) -> str:
        """The public base URL, or the bound address when none is configured."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}"


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("catalogue", appauthor=False))


def _bool(value: str) -> bool:
    return value.strip().lower() in TRUE_WORDS


def _rules(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.replace(";", ",").split(",") if part.strip())


def _fingerprints(value: str) -> tuple[str, ...]:
    """Comma-separated key fingerprints, each written "SHA256:..." (the prefix added when left out)."""
    found = []
    for part in _rules(value):
        part = part.rstrip("=")
        found.append("SHA256:" + (part[7:] if part.upper().startswith("SHA256:") else part))
    return tuple(found)


# Environment variable -> (Settings field, parser).
ENVIRONMENT = {
    "CATALOGUE_DATA_DIR": ("data_dir", Path),
    "CATALOGUE_HOST": ("host", str),
    "CATALOGUE_PORT": ("port", int),
    "CATALOGUE_WORKERS": ("workers", int),
    "CATALOGUE_PUBLIC_URL": ("public_url", str),
    "ENABLE_BULK_UPDATE": ("enable_bulk_update", _bool),
    "ENABLE_PATCH_ALL": ("enable_patch_all", _bool),
    "USER_DELETION_RULES": ("user_deletion_rules", _rules),
    "ACCOUNT_EMAIL_REQUIRED": ("account_email_required", _bool),
    "REST_API_DEFAULT_PAGE_SIZE": ("default_page_size", int),
    "CATALOGUE_MAX_PAGE_SIZE": ("max_page_size", int),
    "ACCESS_TOKEN_EXPIRE_SECONDS": ("token_lifetime_seconds", int),
    "CATALOGUE_SESSION_SECONDS": ("session_lifetime_seconds", int),
    "CATALOGUE_JOB_WORKERS": ("job_workers", int),
    "CATALOGUE_HARVEST_TICK": ("harvest_tick_seconds", float),
    "CATALOGUE_MAX_RASTER_SIDE": ("max_raster_side", int),
    "CATALOGUE_MAX_RASTER_PIXELS": ("max_raster_pixels", int),
    "CATALOGUE_IMPORT_DIR": ("import_dir", Path),
    "CATALOGUE_LAYER_CACHE_MB": ("layer_cache_mb", int),
    "CATALOGUE_TILE_CACHE_MB": ("tile_cache_mb", int),
    "CATALOGUE_THUMBNAIL_QUIET": ("thumbnail_quiet_seconds", float),
    "CATALOGUE_READ_THREADS": ("read_threads", int),
    "CATALOGUE_READS_AT_ONCE": ("reads_at_once", int),
    "CATALOGUE_ADMIN_USERNAME": ("admin_username", str),
    "CATALOGUE_ADMIN_PASSWORD": ("admin_password", str),
    "CATALOGUE_ADMIN_EMAIL": ("admin_email", str),
    "CATALOGUE_SERVER_PID": ("server_pid", int),
    "CATALOGUE_LAUNCHER_PID": ("launcher_pid", int),
    "CATALOGUE_LAUNCHER_TMP": ("launcher_tmp", str),
    "CATALOGUE_TRUSTED_KEYS": ("trusted_keys", _fingerprints),
    "CATALOGUE_SIGN_PACKAGES": ("sign_packages", _bool),
    "CATALOGUE_PACKAGE_RESERVE_MB": ("package_reserve_mb", int),
    "CATALOGUE_PUBLISHER_NAME": ("publisher_name", str),
    "CATALOGUE_PUBLISHER_URL": ("publisher_url", str),
    "CATALOGUE_PUBLISHER_EMAIL": ("publisher_email", str),
}


def load_settings(environ: dict[str, str] | None = None, **overrides: object) -> Settings:
    """Settings from the environment, then explicit overrides (command-line flags) on top."""
    environ = dict(os.environ if environ is None else environ)
    values: dict[str, Any] = {}
    for name, (field, parse) in ENVIRONMENT.items():
        if environ.get(name, "") != "":
            try:
                values[field] = parse(environ[name])
            except ValueError as exc:
                raise SystemExit(f"{name}={environ[name]!r} is not valid: {exc}") from None
    values.update({k: v for k, v in overrides.items() if v is not None})
    values["port_chosen"] = "port" in values
    values.setdefault("data_dir", default_data_dir())
    values["data_dir"] = Path(values["data_dir"]).expanduser().resolve()
    settings = Settings(**values)
    if settings.max_page_size < settings.default_page_size or settings.default_page_size < 1:
        raise SystemExit("page sizes must satisfy 1 <= default <= maximum")
    if settings.job_workers < 1:
        raise SystemExit("CATALOGUE_JOB_WORKERS must be at least 1")
    if settings.session_lifetime_seconds < 1:
        raise SystemExit("CATALOGUE_SESSION_SECONDS must be at least 1")
    if not settings.thumbnail_quiet_seconds >= 0:
        raise SystemExit("CATALOGUE_THUMBNAIL_QUIET must be a number of seconds, at least 0")
    if settings.package_reserve_mb < 0:
        raise SystemExit("CATALOGUE_PACKAGE_RESERVE_MB must be at least 0")
    if min(settings.read_threads, settings.layer_cache_mb, settings.reads_at_once, settings.tile_cache_mb) < 0:
        raise SystemExit("CATALOGUE_READ_THREADS, CATALOGUE_READS_AT_ONCE, CATALOGUE_LAYER_CACHE_MB and"
                         " CATALOGUE_TILE_CACHE_MB must be at least 0")
    return settings


def desktop_available(environ: dict[str, str] | None = None) -> bool:
    """Whether there is a desktop to open a browser on: never under CI, with
    CATALOGUE_NO_BROWSER set, over SSH without X, or on a bare server."""
    import sys

    environ = os.environ if environ is None else environ
    if environ.get("CI") or environ.get("CATALOGUE_NO_BROWSER"):
        return False
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))


def restore_library_path() -> None:
    """In the single executable: give back the library search path that the programs this one
    starts (a browser) should see. PyInstaller's bootloader points LD_LIBRARY_PATH at the
    executable's own libraries, which this process has loaded already, and keeps the value it
    found under LD_LIBRARY_PATH_ORIG; a browser started with ours may load them and fail."""
    for name in ("LD_LIBRARY_PATH", "LIBPATH", "DYLD_LIBRARY_PATH"):
        original = os.environ.pop(name + "_ORIG", None)
        if original is not None:
            os.environ[name] = original
        else:
            os.environ.pop(name, None)


def export_environment(settings: Settings) -> dict[str, str]:
    """The environment that makes load_settings() in a worker process give back these settings."""
    env: dict[str, str] = {}
    for name, (field, _parse) in ENVIRONMENT.items():
        value = getattr(settings, field)
        if isinstance(value, bool):
            env[name] = "true" if value else "false"
        elif isinstance(value, tuple):
            env[name] = ",".join(value) or ","
        elif value is None:
            env[name] = ""
        else:
            env[name] = str(value)
    return env
