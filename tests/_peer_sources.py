"""The peers' own test files, each pinned by address and SHA-256.

The peers' suites (``tests/test_*_suite.py``) run upstream test files against
ranklens's drop-ins.  A file published on the package index (ir_measures'
sdist) is downloaded once into ``$RANKLENS_PEER_CACHE`` (default
``~/.cache/ranklens/peer-suites``).  A file published only on GitHub
(pytrec_eval-terrier's tests: its sdist ships none), which CI's network does
not reach, is kept unmodified in ``tests/data/peers/`` with its licence, as
NIST's files are kept in ``tests/data``, under the name ``<name>.txt`` (so that
neither pytest nor ruff takes it for project code).  Either way the bytes are
checked against the pinned hash before use.  A download that cannot reach the
host skips the suite with the reason; a file whose hash differs is an error
(the pin or the host changed, and a silent run of other tests would not be the
conformance the suite claims).

Rejected: keeping every file in the repository (the sdists are large and on
the index CI reaches); ``pip download`` at test time (pip builds an sdist's
metadata, and pytrec_eval-terrier's build fetches trec_eval from GitHub, which
fails offline even when the sdist itself is cached).
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest

_TIMEOUT_S = 60
KEPT = Path(__file__).parent / "data" / "peers"


def cache_dir() -> Path:
    root = os.environ.get("RANKLENS_PEER_CACHE")
    path = Path(root) if root else Path.home() / ".cache" / "ranklens" / "peer-suites"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(url: str, sha256: str, name: str) -> Path:
    """The file at ``url`` as ``name`` (kept in ``tests/data/peers``, else
    downloaded into the cache), its SHA-256 checked.

    Skips the calling test module when the host cannot be reached; fails when
    the host refuses the file (an HTTP error) or the bytes are not the pinned
    ones."""
    kept = sorted(KEPT.glob(f"*/{name}.txt"))
    path = kept[0] if kept else cache_dir() / name
    if not path.exists():
        part = path.with_name(path.name + ".part")
        try:
            with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response:
                part.write_bytes(response.read())
        except urllib.error.HTTPError as exc:
            # the host answered: the pinned file is gone, not the network
            part.unlink(missing_ok=True)
            pytest.fail(f"{url}: {exc}")
        except (urllib.error.URLError, OSError) as exc:
            part.unlink(missing_ok=True)
            pytest.skip(f"{url} could not be downloaded ({exc}); the suite needs the network once")
        part.replace(path)
    got = _sha256(path)
    if got != sha256:
        pytest.fail(f"{path}: SHA-256 {got}, pinned {sha256} (from {url}); delete it to refetch")
    return path


def check_found(offline: str, ids: set[str], expected: set[str], known: dict[str, str]) -> None:
    """A peer suite's collected test ``ids`` hold the ``expected`` ones and every
    one ``known`` to fail: a rename upstream must not leave a suite silently
    running nothing, nor a listed failure pointing at no test.  Skips with the
    reason when the suite could not be fetched (``offline``)."""
    if offline:
        pytest.skip(offline)
    assert expected <= ids, sorted(expected - ids)
    assert set(known) <= ids, sorted(set(known) - ids)


def unpack(archive: Path, member_prefix: str) -> Path:
    """The members of the ``.tar.gz`` ``archive`` under ``member_prefix``,
    extracted once next to it; returns the extracted ``member_prefix``."""
    root = archive.with_name(archive.name[: -len(".tar.gz")])
    done = root / ".unpacked"
    if not done.exists():
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(member_prefix)]
            for m in members:
                if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in m.name:
                    pytest.fail(f"{archive}: unexpected member {m.name!r}")
            # the "data" filter (Python >= 3.12, backported to security releases)
            # refuses links and special files too; older Pythons rely on the check above
            kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(root, members=members, **kwargs)
        done.touch()
    return root / member_prefix
