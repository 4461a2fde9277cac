"""The manifests' security settings (issue 11): auth on with token hashes from a Secret, the
memory budget inside the memory limit, and a NetworkPolicy that admits only what an
operator names, in the base and in the overlay (deploy/k8s-overlays/clients)."""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from .test_deploy import KUBERNETES_VERSION, ROOT, pod_spec, render

OVERLAY = ROOT / "deploy" / "k8s-overlays" / "clients"
MiB = 1 << 20
REST_RSS = 110 * MiB  # measured at rest after start-up (README, "Memory")


@pytest.fixture(scope="module")
def manifests() -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in render()}


def _quantity(text: str) -> int:
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
    for suffix, scale in units.items():
        if text.endswith(suffix):
            return int(text[: -len(suffix)]) * scale
    return int(text)


def test_deployment_requires_tokens_from_a_secret(manifests: dict[str, dict[str, Any]]) -> None:
    spec = pod_spec(manifests["Deployment"])
    container = spec["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["ARCHCRYPT_AUTH"] == "required"
    tokens = Path(env["ARCHCRYPT_TOKENS_FILE"])
    mount = next(m for m in container["volumeMounts"] if m["name"] == "tokens")
    assert tokens.parent == Path(mount["mountPath"]) and mount["readOnly"] is True
    volume = next(v for v in spec["volumes"] if v["name"] == "tokens")
    assert volume["secret"]["secretName"] == "archcrypt-tokens"
    assert volume["secret"]["defaultMode"] & 0o007 == 0  # not world-readable
    assert spec["securityContext"]["fsGroup"] == spec["securityContext"]["runAsGroup"]
    assert env["ARCHCRYPT_AUDIT_LOG"] == "stdout"


def test_memory_budget_fits_the_memory_limit(manifests: dict[str, dict[str, Any]]) -> None:
    container = pod_spec(manifests["Deployment"])["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    budget = int(env["ARCHCRYPT_MEMORY_BUDGET_BYTES"])
    limit = _quantity(container["resources"]["limits"]["memory"])
    # README's formula: at rest + the budget + a quarter of it for what the estimate misses
    assert REST_RSS + budget * 5 // 4 <= limit, (budget, limit)


def _peers(policy: dict[str, Any]) -> list[dict[str, Any]]:
    return [peer for rule in policy["spec"]["ingress"] for peer in rule["from"]]


def _check_named_peers(policy: dict[str, Any]) -> None:
    """Every peer names its namespace by name and the pods in it: no peer a workload can
    join by labelling itself, none that admits a whole namespace or the whole cluster."""
    peers = _peers(policy)
    assert peers
    for peer in peers:
        assert set(peer) == {"namespaceSelector", "podSelector"}, peer
        names = peer["namespaceSelector"].get("matchLabels", {})
        assert set(names) == {"kubernetes.io/metadata.name"}, peer
        assert peer["podSelector"].get("matchLabels"), peer
        assert "ipBlock" not in peer
    assert all(rule.get("ports") for rule in policy["spec"]["ingress"])


def test_base_networkpolicy_admits_only_prometheus(manifests: dict[str, dict[str, Any]]) -> None:
    policy = manifests["NetworkPolicy"]
    _check_named_peers(policy)
    namespaces = {
        p["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] for p in _peers(policy)
    }
    assert namespaces == {"monitoring"}


def overlay_policy(base: dict[str, Any]) -> dict[str, Any]:
    """The overlay's patch as kustomize applies it: a NetworkPolicy's ingress list has no
    merge key, so a strategic merge patch replaces it whole."""
    kustomization = yaml.safe_load((OVERLAY / "kustomization.yaml").read_text())
    assert kustomization["resources"] == ["../../k8s"]
    (patch_ref,) = kustomization["patches"]
    patch = yaml.safe_load((OVERLAY / patch_ref["path"]).read_text())
    assert (patch["kind"], patch["metadata"]["name"]) == ("NetworkPolicy", base["metadata"]["name"])
    policy = copy.deepcopy(base)
    policy["spec"]["ingress"] = patch["spec"]["ingress"]
    return policy


def _kustomize(kubectl: str, tmp_path: Path) -> str:
    """`kubectl kustomize` of the overlay, on a copy of deploy/ whose secretGenerator files
    (git-ignored, made by the operator) are stand-ins."""
    copy_root = tmp_path / "deploy"
    shutil.copytree(ROOT / "deploy", copy_root)
    base = yaml.safe_load((copy_root / "k8s" / "kustomization.yaml").read_text())
    for generator in base.get("secretGenerator", []):
        for entry in generator.get("files", []):
            path = copy_root / "k8s" / entry.split("=", 1)[-1]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("stand-in\n")
    overlay = copy_root / OVERLAY.relative_to(ROOT / "deploy")
    return subprocess.run(
        [kubectl, "kustomize", str(overlay)], capture_output=True, text=True, check=True
    ).stdout


def test_overlay_names_client_namespaces_and_pods(
    manifests: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    import kubernetes_validate

    policy = overlay_policy(manifests["NetworkPolicy"])
    kubernetes_validate.validate(policy, KUBERNETES_VERSION, strict=True)
    _check_named_peers(policy)
    namespaces = {
        p["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] for p in _peers(policy)
    }
    assert "monitoring" in namespaces and len(namespaces) >= 2
    kubectl = shutil.which("kubectl")
    if kubectl is not None:  # the real kustomize agrees, where one is installed
        built = _kustomize(kubectl, tmp_path)
        real = next(d for d in yaml.safe_load_all(built) if d and d["kind"] == "NetworkPolicy")
        assert real["spec"]["ingress"] == policy["spec"]["ingress"]


def test_a_label_alone_is_refused_by_the_check() -> None:
    """The peer check above does fail on the old policy's shape (so passing means something)."""
    labelled = {
        "spec": {
            "ingress": [
                {
                    "from": [
                        {
                            "namespaceSelector": {},
                            "podSelector": {"matchLabels": {"archcrypt-client": "true"}},
                        }
                    ],
                    "ports": [{"port": "http"}],
                }
            ],
            "egress": [],
        }
    }
    with pytest.raises(AssertionError):
        _check_named_peers(labelled)
