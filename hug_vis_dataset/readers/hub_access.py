"""The Hugging Face Hub as a front door: fail fast offline, and name the local alternative.

Every place that takes a Hub id (``hugvis evaluate/predict --dataset hugvis/hug-vis``,
``--model transformers:owner/name``, ``hugvis weights download``, ``hugvis publish``,
:func:`hug_vis_dataset.hub.load`) asks :func:`unreachable_reason` before it downloads. When
``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE`` is set, or the endpoint (``HF_ENDPOINT``, default
``https://huggingface.co``) does not accept a TCP connection within :data:`PROBE_TIMEOUT_S`, the
caller uses what is already cached or raises :class:`HubUnreachableError`, one line naming the Hub
id and what to pass instead. Without the check, ``huggingface_hub`` and ``datasets`` retry for
about 23 s before failing (or silently fall back to a stale cache entry).

This module is low in the layering (it imports only :mod:`hug_vis_dataset.errors`), so the
dataset readers, the weights registry and publishing can all use it.

Example:
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"HF_HUB_OFFLINE": "1"}):
    ...     print(HubUnreachableError(HUB_DATASET_ID, unreachable_reason(), DATASET_ALTERNATIVE))
    hugvis/hug-vis is not reachable (offline: HF_HUB_OFFLINE is set); pass a local release tree or built repo instead, e.g. --dataset demo_out/hug-vis (`make demo` writes one)
"""

from __future__ import annotations

import os
import re
import socket
import threading
from pathlib import Path
from typing import Callable, TypeVar
from urllib.parse import urlsplit

from ..errors import HugvisError

#: The dataset's id on the Hub; the evaluate modules are ``hugvis/<name>``.
HUB_DATASET_ID = "hugvis/hug-vis"
#: The leaderboard's results repo (every scored run) and requests repo (the scoring queue).
HUB_RESULTS_ID = "hugvis/hug-vis-results"
HUB_REQUESTS_ID = "hugvis/hug-vis-requests"
#: Where ``make demo`` (``hugvis demo --out demo_out``) writes the built dataset repo and the
#: evaluate module folders, named as on the Hub so ``load_dataset("hug-vis", ...)`` and
#: ``evaluate.load("hugvis/<name>")`` find them when run from ``demo_out/``.
DEMO_OUT = Path("demo_out")
DEMO_DATASET_DIR = "hug-vis"
DEMO_MODULES_DIR = "hugvis"
#: Environment variable naming the built repo :func:`hug_vis_dataset.hub.load` reads.
ENV_DATASET = "HUGVIS_DATASET"
#: Seconds the reachability probe waits for the endpoint (DNS lookup + TCP connect).
PROBE_TIMEOUT_S = 2.0
#: What a scoring or prediction run can use instead of the Hub dataset.
DATASET_ALTERNATIVE = (f"pass a local release tree or built repo instead, e.g. --dataset "
                       f"{(DEMO_OUT / DEMO_DATASET_DIR).as_posix()} (`make demo` writes one)")
#: What a library user can use instead of the Hub dataset.
LOAD_ALTERNATIVE = (f"pass a built repo folder (load(config, dataset=PATH)) or set {ENV_DATASET}=PATH "
                    f"(`make demo` writes {(DEMO_OUT / DEMO_DATASET_DIR).as_posix()})")

_TRUE = {"1", "ON", "YES", "TRUE"}
_OFFLINE_FLAGS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
T = TypeVar("T")


class HubUnreachableError(HugvisError, ConnectionError):
    """The Hub (or a download URL) cannot be reached; the message names the id and the local alternative.

    Args:
        hub_id: what was asked for (``hugvis/hug-vis``, a weights repo, a URL).
        reason: why it is unreachable (:func:`unreachable_reason`).
        alternative: what to pass instead, as an instruction.
    """

    def __init__(self, hub_id: str, reason: str, alternative: str):
        super().__init__(f"{hub_id} is not reachable ({reason}); {alternative}")
        self.hub_id, self.reason, self.alternative = hub_id, reason, alternative

    def __reduce__(self):  # OSError pickles by its args; keep the three fields across processes
        return type(self), (self.hub_id, self.reason, self.alternative)


_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def looks_like_hub_id(text: str) -> bool:
    """``owner/name`` with Hub-legal characters (and not an existing local path).

    Example:
        >>> looks_like_hub_id("hugvis/hug-vis"), looks_like_hub_id("./release"), looks_like_hub_id("a/b/c")
        (True, False, False)
    """
    return bool(_HUB_ID.fullmatch(text)) and not Path(text).exists()


def offline_flag() -> "str | None":
    """``"offline: <VAR> is set"`` for the first Hugging Face offline variable set to a true value, else None.

    Read from the environment on every call (``huggingface_hub`` reads it once, at import).
    """
    for var in _OFFLINE_FLAGS:
        if os.environ.get(var, "").strip().upper() in _TRUE:
            return f"offline: {var} is set"
    return None


def hub_endpoint() -> str:
    """The Hub endpoint ``huggingface_hub`` uses (``HF_ENDPOINT``, default ``https://huggingface.co``)."""
    return os.environ.get("HF_ENDPOINT", "").rstrip("/") or "https://huggingface.co"


def _connect(host: str, port: int, timeout: float, outcome: list) -> None:
    try:
        socket.create_connection((host, port), timeout=timeout).close()
        outcome.append(None)
    except OSError as err:
        outcome.append(err.strerror or type(err).__name__)


def unreachable_reason(url: "str | None" = None, timeout: float = PROBE_TIMEOUT_S,
                       honour_offline_flags: bool = True) -> "str | None":
    """Why ``url`` (default: the Hub endpoint) cannot be used now, or None when it answers.

    An offline flag wins without touching the network; otherwise one TCP connection to the
    URL's host and port is attempted. The name lookup runs inside the same bounded wait (in a
    daemon thread), since ``socket.create_connection``'s timeout does not cover DNS.

    Example:
        >>> import socket
        >>> s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
        >>> unreachable_reason(f"http://127.0.0.1:{port}", honour_offline_flags=False)
        '127.0.0.1:... did not accept a connection: Connection refused'
    """
    if honour_offline_flags:
        flag = offline_flag()
        if flag:
            return flag
    parts = urlsplit(url or hub_endpoint())
    host = parts.hostname or ""
    port = parts.port or (80 if parts.scheme == "http" else 443)
    outcome: list = []
    probe = threading.Thread(target=_connect, args=(host, port, timeout, outcome), daemon=True)
    probe.start()
    probe.join(timeout)
    if not outcome:
        return f"{host}:{port} did not answer within {timeout:g} s"
    return None if outcome[0] is None else f"{host}:{port} did not accept a connection: {outcome[0]}"


def require_reachable(hub_id: str, alternative: str) -> None:
    """Raise :class:`HubUnreachableError` at once when the Hub cannot be reached (for uploads,
    which have no cached fallback)."""
    reason = unreachable_reason()
    if reason:
        raise HubUnreachableError(hub_id, reason, alternative)


def is_connection_failure(err: BaseException) -> bool:
    """True for the errors ``huggingface_hub``/``datasets`` raise when the Hub cannot be reached
    (offline mode, nothing cached, refused/timed-out connections), False for answers such as 404 or 401."""
    from contextlib import suppress

    kinds: list[type] = [ConnectionError, TimeoutError]
    with suppress(ImportError):
        from huggingface_hub.errors import LocalEntryNotFoundError, OfflineModeIsEnabled

        kinds += [LocalEntryNotFoundError, OfflineModeIsEnabled]
    with suppress(ImportError):
        import httpx

        kinds += [httpx.TransportError]
    with suppress(ImportError):
        import requests

        kinds += [requests.ConnectionError, requests.Timeout]
    return isinstance(err, tuple(kinds))


def fetch_or_explain(hub_id: str, alternative: str, fetch: "Callable[[bool], T]",
                     url: "str | None" = None) -> T:
    """Run ``fetch(local_only)``, turning an unreachable Hub into :class:`HubUnreachableError`.

    ``local_only`` is True when the Hub is unreachable (:func:`unreachable_reason`): ``fetch``
    should then use only what is cached (``local_files_only=True``), so nothing waits on retries.
    A connection failure in either case becomes the one-line error; other errors (404, gated,
    bad revision) propagate for the caller to word.

    Example:
        >>> import os
        >>> from unittest import mock
        >>> def nothing_cached(local_only):
        ...     raise ConnectionError("not in the cache")
        >>> with mock.patch.dict(os.environ, {"HF_HUB_OFFLINE": "1"}):
        ...     fetch_or_explain("hugvis/x", "use a copy", lambda local_only: "cache" if local_only else "Hub")
        'cache'
        >>> with mock.patch.dict(os.environ, {"HF_HUB_OFFLINE": "1"}):
        ...     fetch_or_explain("hugvis/x", "use a copy", nothing_cached)
        Traceback (most recent call last):
        ...
        hug_vis_dataset.readers.hub_access.HubUnreachableError: hugvis/x is not reachable (offline: HF_HUB_OFFLINE is set); use a copy
    """
    reason = unreachable_reason(url, honour_offline_flags=url is None)
    try:
        return fetch(reason is not None)
    except HubUnreachableError:
        raise
    except Exception as err:  # noqa: BLE001 - sorted: connection failures get the one-line error
        if reason is None and not is_connection_failure(err):
            raise
        detail = reason or f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}".rstrip(": ")
        raise HubUnreachableError(hub_id, detail, alternative) from None
