"""Dispatch through the facade: the report, force/unforce, thread overrides, environment
configuration (in subprocesses: init runs once per process) and self-tests."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
import threading

import pytest

import archcrypt
from archcrypt import crypto

from . import reference
from .rows import RUNNABLE

# the submodule, not the crypto.backends() function that shadows it as an attribute
backends_module = importlib.import_module("archcrypt.crypto.backends")

ARCHES = {"amd64", "arm64", "ppc64le", "s390x", "unknown"}


def _run(env: dict[str, str], code: str) -> dict[str, object]:
    """Run `code` in a fresh interpreter with env; it prints one JSON object."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ARCHCRYPT_")}
    full_env.update(env)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


INIT_ERROR = """
    import json
    from archcrypt import crypto
    out = {}
    for label, call in (("init", crypto.init), ("digest", lambda: crypto.digest("sha256", b""))):
        try:
            call()
        except crypto.ArchcryptError as exc:
            out[label] = {"error": type(exc).__name__, "message": str(exc)}
        else:
            out[label] = {"error": None}
    print(json.dumps(out))
"""

REPORT = """
    import dataclasses, json
    from archcrypt import crypto
    print(json.dumps(dataclasses.asdict(crypto.backends())))
"""


# ---- the report --------------------------------------------------------------------------


def test_report_shape() -> None:
    report = crypto.backends()
    assert report.arch in ARCHES
    assert report.version == crypto.version() == archcrypt.__version__
    assert report.compiler
    feature_names = [f.name for f in report.features]
    assert len(set(feature_names)) == len(feature_names)
    for feature in report.features:
        assert feature.name == feature.name.lower()
        assert feature.name
        assert feature.state in ("present", "absent", "masked")
    assert tuple(a.name for a in report.algorithms) == crypto.DISPATCH_ALGORITHMS
    assert set(crypto.DISPATCH_ALGORITHMS) == {
        "chacha20",
        "poly1305",
        "chacha20-poly1305",
        "sha256",
        "sha512",
        "camellia",
    }
    for algorithm in report.algorithms:
        names = [i.name for i in algorithm.implementations]
        assert names, algorithm.name
        assert len(set(names)) == len(names), algorithm.name
        # the order is the policy: portable (requires nothing) last, and always runnable
        last = algorithm.implementations[-1]
        assert last.requires == (), algorithm.name
        assert last.runnable, algorithm.name
        assert algorithm.selected in names
        chosen = algorithm.implementations[names.index(algorithm.selected)]
        assert chosen.runnable
        for impl in algorithm.implementations:
            # rows only name features of this architecture
            assert set(impl.requires) <= set(feature_names), (algorithm.name, impl.name)
            usable = all(f.state == "present" for f in report.features if f.name in impl.requires)
            assert impl.runnable == usable, (algorithm.name, impl.name)
        if not algorithm.forced:
            # automatic choice = the first runnable row
            first = next(i for i in algorithm.implementations if i.runnable)
            assert algorithm.selected == first.name, algorithm.name


# Rows that run only inputs of at least min_len bytes, written here by hand (an oracle
# independent of the rows.h files): (table, row) -> (min_len, the row that runs shorter
# inputs). Every other row takes any length.
MIN_LEN = {
    ("chacha20-poly1305", "avx2"): (1024, "composed"),
    ("chacha20", "sve2"): (256, "neon"),  # arm64 only
}


def test_min_len_and_the_row_that_runs_below_it() -> None:
    for algorithm in crypto.backends().algorithms:
        for impl in algorithm.implementations:
            expected = MIN_LEN.get((algorithm.name, impl.name), (0, None))
            assert (impl.min_len, impl.below_min_len) == expected, (algorithm.name, impl.name)


def test_report_is_frozen() -> None:
    report = crypto.backends()
    with pytest.raises(AttributeError):
        report.arch = "x"  # type: ignore[misc]


# ---- force / unforce ---------------------------------------------------------------------

_K, _N = bytes(range(32)), bytes(range(12))
_PT = bytes(range(256)) * 5


def _smoke_chacha20() -> None:
    assert crypto.chacha20_xor(_K, _N, _PT, 1) == reference.chacha20_xor(_K, _N, _PT, 1)


def _smoke_poly1305() -> None:
    assert crypto.mac("poly1305", _K, _PT) == reference.poly1305(_K, _PT)


def _smoke_aead() -> None:
    expected = reference.chacha20poly1305_seal(_K, _N, _PT, b"ad")
    assert crypto.aead_seal("chacha20-poly1305", _K, _N, _PT, b"ad") == expected


def _smoke_hash(*names: str) -> None:
    for name in names:
        assert crypto.digest(name, _PT) == reference.digest(name, _PT)


def _smoke_camellia() -> None:
    assert crypto.camellia_ecb_encrypt(_K, _PT) == reference.camellia_ecb(_K, _PT)


SMOKE = {
    "chacha20": _smoke_chacha20,
    "poly1305": _smoke_poly1305,
    "chacha20-poly1305": _smoke_aead,
    "sha256": lambda: _smoke_hash("sha224", "sha256"),
    "sha512": lambda: _smoke_hash("sha384", "sha512"),
    "camellia": _smoke_camellia,
}


@pytest.mark.parametrize("algorithm", crypto.DISPATCH_ALGORITHMS)
def test_force_and_unforce(algorithm: str) -> None:
    automatic = next(a for a in crypto.backends().algorithms if a.name == algorithm)
    assert not automatic.forced
    try:
        for impl in RUNNABLE[algorithm]:
            crypto.force(algorithm, impl)
            now = next(a for a in crypto.backends().algorithms if a.name == algorithm)
            assert now.selected == impl
            assert now.forced
            assert crypto.self_test(algorithm)
            SMOKE[algorithm]()  # the forced row does real work
    finally:
        crypto.force(algorithm, None)
    after = next(a for a in crypto.backends().algorithms if a.name == algorithm)
    assert after == automatic


def test_force_rejects_unknown_names() -> None:
    with pytest.raises(crypto.UnknownImplementationError, match="nonexistent"):
        crypto.force("chacha20", "nonexistent")
    with pytest.raises(crypto.UnknownAlgorithmError, match="rot13"):
        crypto.force("rot13", "portable")
    with pytest.raises(crypto.UnknownAlgorithmError):
        crypto.force("rot13", None)
    assert not any(a.forced for a in crypto.backends().algorithms)


# ---- per-thread overrides ----------------------------------------------------------------


@pytest.mark.parametrize("algorithm", crypto.DISPATCH_ALGORITHMS)
def test_use_implementation_nests_and_restores(algorithm: str) -> None:
    rows = RUNNABLE[algorithm]
    overrides = backends_module._thread_overrides()
    assert algorithm not in overrides
    with crypto.use_implementation(algorithm, rows[0]):
        assert overrides[algorithm] == rows[0]
        with crypto.use_implementation(algorithm, rows[-1]):
            assert overrides[algorithm] == rows[-1]
            assert crypto.self_test(algorithm, rows[-1])
        assert overrides[algorithm] == rows[0]
    assert algorithm not in overrides
    with pytest.raises(RuntimeError, match="boom"), crypto.use_implementation(algorithm, rows[0]):
        raise RuntimeError("boom")
    assert algorithm not in overrides
    # thread overrides never show up as the process-wide choice
    assert not any(a.forced for a in crypto.backends().algorithms)


def test_use_implementation_is_per_thread() -> None:
    seen: dict[str, object] = {}

    def other() -> None:
        seen["overrides"] = dict(backends_module._thread_overrides())
        seen["digest"] = crypto.digest("sha256", b"abc")

    with crypto.use_implementation("sha256", RUNNABLE["sha256"][-1]):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen["overrides"] == {}
    assert isinstance(seen["digest"], bytes)


def test_use_implementation_rejects_unknown_names() -> None:
    with pytest.raises(crypto.UnknownImplementationError, match="nonexistent"):  # noqa: SIM117
        with crypto.use_implementation("chacha20", "nonexistent"):
            pytest.fail("entered the block")
    with pytest.raises(crypto.UnknownAlgorithmError):  # noqa: SIM117
        with crypto.use_implementation("rot13", "portable"):
            pytest.fail("entered the block")
    assert backends_module._thread_overrides() == {}


# ---- self-tests --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("algorithm", "impl"),
    [(a, i) for a in crypto.DISPATCH_ALGORITHMS for i in RUNNABLE[a]],
    ids=lambda v: str(v),
)
def test_self_test_every_runnable_implementation(algorithm: str, impl: str) -> None:
    assert crypto.self_test(algorithm, impl) is True


def test_self_test_default_and_errors() -> None:
    for algorithm in crypto.DISPATCH_ALGORITHMS:
        assert crypto.self_test(algorithm) is True
    with pytest.raises(crypto.UnknownAlgorithmError):
        crypto.self_test("rot13")
    with pytest.raises(crypto.UnknownImplementationError):
        crypto.self_test("sha256", "nonexistent")
    not_runnable = [
        (a.name, i.name)
        for a in crypto.backends().algorithms
        for i in a.implementations
        if not i.runnable
    ]
    for algorithm, impl in not_runnable:
        with pytest.raises(crypto.UnsupportedImplementationError):
            crypto.self_test(algorithm, impl)
        with pytest.raises(crypto.UnsupportedImplementationError):
            crypto.force(algorithm, impl)


def test_core_hz() -> None:
    hz = crypto.core_hz(0.02)
    assert 1e8 < hz < 1e10
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(crypto.InvalidInputError):
            crypto.core_hz(bad)


# ---- configuration from the environment (fresh processes) --------------------------------


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"ARCHCRYPT_FORCE": "chacha20=nonexistent"}, "nonexistent"),
        ({"ARCHCRYPT_FORCE": "rot13=portable"}, "rot13"),
        ({"ARCHCRYPT_FORCE": "chacha20"}, "chacha20"),
        ({"ARCHCRYPT_DISABLE_CPU_FEATURES": "no_such_feature"}, "no_such_feature"),
    ],
    ids=["unknown-implementation", "unknown-algorithm", "no-equals", "unknown-feature"],
)
def test_bad_environment_raises_configuration_error(env: dict[str, str], needle: str) -> None:
    out = _run(env, INIT_ERROR)
    for label in ("init", "digest"):  # every call initialises, so every call reports it
        result = out[label]
        assert result["error"] == "ConfigurationError", out  # type: ignore[index]
        message = str(result["message"])  # type: ignore[index]
        assert needle in message, message
        assert next(iter(env)) in message, message  # names the variable at fault


def test_force_from_environment() -> None:
    env = {"ARCHCRYPT_FORCE": "chacha20=portable, sha256=portable"}
    report = _run(env, REPORT)
    by_name = {a["name"]: a for a in report["algorithms"]}  # type: ignore[attr-defined]
    for name in ("chacha20", "sha256"):
        assert by_name[name]["selected"] == "portable"
        assert by_name[name]["forced"]
    assert not by_name["poly1305"]["forced"]


def test_disable_all_cpu_features_leaves_feature_free_rows() -> None:
    """With every feature masked, each algorithm runs the first row that needs no CPU
    feature: portable, or a plain-C row ordered before it (e.g. poly1305 scalar64)."""
    report = _run({"ARCHCRYPT_DISABLE_CPU_FEATURES": "all"}, REPORT)
    features = report["features"]
    assert all(f["state"] in ("absent", "masked") for f in features)  # type: ignore[attr-defined]
    here = {f.name: f.state for f in crypto.backends().features}
    for f in features:  # type: ignore[attr-defined]
        assert f["state"] == ("masked" if here[f["name"]] != "absent" else "absent")
    for algorithm in report["algorithms"]:  # type: ignore[attr-defined]
        rows = algorithm["implementations"]
        for row in rows:
            assert row["runnable"] == (not row["requires"]), (algorithm["name"], row)
        first_free = next(row["name"] for row in rows if not row["requires"])
        assert algorithm["selected"] == first_free, algorithm
        assert rows[-1]["requires"] == [], algorithm  # and portable is still there, last


def test_disabled_rows_are_refused_in_a_masked_process() -> None:
    code = """
        import json
        from archcrypt import crypto
        refused = []
        for a in crypto.backends().algorithms:
            for i in a.implementations:
                if i.requires:
                    for call in (lambda: crypto.force(a.name, i.name),
                                 lambda: crypto.self_test(a.name, i.name)):
                        try:
                            call()
                        except crypto.UnsupportedImplementationError:
                            refused.append(True)
                        else:
                            refused.append(False)
        print(json.dumps({"refused": refused}))
    """
    out = _run({"ARCHCRYPT_DISABLE_CPU_FEATURES": "all"}, code)
    assert all(out["refused"]), out  # type: ignore[arg-type]


LADDER = """
    import json
    from archcrypt import crypto
    print(json.dumps({a.name: [a.selected, [[i.name, list(i.requires), i.runnable]
                                           for i in a.implementations]]
                      for a in crypto.backends().algorithms}))
"""


@pytest.mark.parametrize("algorithm", [a.name for a in crypto.backends().algorithms])
def test_masking_walks_the_ladder_down_to_a_feature_free_row(algorithm: str) -> None:
    """Masking the features of the chosen row, one rung at a time, selects the next
    runnable row in table order each time, until a row that needs no feature."""
    masked: set[str] = set()
    seen: list[str] = []
    while True:
        env = {"ARCHCRYPT_DISABLE_CPU_FEATURES": ",".join(sorted(masked))} if masked else {}
        selected, rows = _run(env, LADDER)[algorithm]  # type: ignore[misc]
        expected = next(name for name, _, runnable in rows if runnable)
        assert selected == expected, f"masked {sorted(masked)}: chose {selected}, not {expected}"
        assert selected not in seen
        seen.append(selected)
        requires = next(req for name, req, _ in rows if name == selected)
        if not requires:
            break
        masked |= set(requires)
    names = [name for name, _, _ in _run({}, LADDER)[algorithm][1]]  # type: ignore[index]
    assert names[-1] in ("portable", "composed")
    # every rung reached is in table order
    assert seen == sorted(seen, key=names.index)
