"""The release workflow (.github/workflows/wheels.yml), checked offline: valid
against GitHub's workflow schema (check-jsonschema's vendored copy), and its
release path as docs/building.rst describes it: one build job, test jobs on
the built files, an upload that needs them all, never cancelled, the tag
checked, twine's strict check, attestations kept."""
import subprocess
import sys

import pytest

from helpers import REPO

WORKFLOW = REPO / ".github" / "workflows" / "wheels.yml"
yaml = pytest.importorskip("ruamel.yaml", reason="ruamel.yaml reads the workflow "
                           "(pip install check-jsonschema)")


@pytest.fixture(scope="module")
def flow():
    if not WORKFLOW.exists():
        pytest.skip("the workflow is not next to the tests")
    return yaml.YAML(typ="safe").load(WORKFLOW.read_text())


def test_schema():
    proc = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                           "vendor.github-workflows", str(WORKFLOW)],
                          capture_output=True, text=True)
    if "No module named check_jsonschema" in proc.stderr:
        pytest.skip("check-jsonschema is not installed")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def steps_text(job):
    return "\n".join(str(s.get("run", "")) + str(s.get("uses", "")) for s in job["steps"])


def test_release_path(flow):
    jobs = flow["jobs"]
    for name, job in jobs.items():
        needs = job.get("needs", [])
        for need in [needs] if isinstance(needs, str) else needs:
            assert need in jobs, f"{name} needs {need}, no such job"
    upload = jobs["upload"]
    assert set(upload["needs"]) == set(jobs) - {"upload"}, "upload waits for every test"
    assert "release" in upload["if"]
    text = steps_text(upload)
    assert "sha256sum -c SHA256SUMS" in text and "pypa/gh-action-pypi-publish" in text
    assert all(s.get("with", {}).get("attestations", True) is not False
               for s in upload["steps"])
    build = steps_text(jobs["build"])
    for step in ("release_checks.py tag", "release_checks.py reproducible",
                 "twine check --strict", "build_wheels.py --sdist", "SHA256SUMS"):
        assert step in build, f"the build job lacks {step}"
    for name, job in jobs.items():
        if name not in ("build", "upload"):
            assert "tools/test_wheels.py --native" in steps_text(job)
            assert "sha256sum -c SHA256SUMS" in steps_text(job)
    # only a pull request's older run is cancelled
    assert flow["concurrency"]["cancel-in-progress"] == \
        "${{ github.event_name == 'pull_request' }}"
