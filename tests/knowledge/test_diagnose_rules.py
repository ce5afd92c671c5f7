"""The rule database and its tables validate, and a user folder extends them."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.diagnose.ruleset import load_rules
from servewise.diagnose.tables import LAYERS
from servewise.errors import UsageError
from servewise.knowledge._load import DataFileError

RULES = load_rules(Path("/nonexistent"))
TAXONOMY = {
    "oom_weight_load", "oom_profile_run", "oom_cudagraph_capture", "oom_workspace_alloc",
    "oom_runtime", "kv_cache_insufficient", "kv_cache_no_memory", "startup_free_memory_low",
    "host_oom_killed", "max_model_len_exceeds_derived", "tp_heads_indivisible",
    "kv_cache_dtype_unsupported", "dtype_unsupported_gpu", "quant_unsupported_gpu",
    "unknown_model_arch", "trust_remote_code_required", "tokenizer_load_error", "hf_auth_gated",
    "model_not_found", "disk_full", "port_in_use", "kernel_unsupported_arch",
    "kernel_unsupported_dtype", "fa_arch_unsupported", "no_kernel_image",
    "kernel_launch_resource_exceeded", "toolchain_arch_unknown", "toolchain_missing_libcuda",
    "binary_abi_mismatch", "driver_too_old", "no_gpu_visible", "hardware_fault",
    "nccl_shm_too_small", "nccl_system_error", "nccl_ib_error", "nccl_p2p_hang",
    "distributed_init_timeout", "load_timeout", "ray_multinode_placement",
}


def test_every_taxonomy_category_has_a_rule() -> None:
    covered = {rule.category for rule in (*RULES.rules, *RULES.signal_rules) if rule.category}
    assert covered >= TAXONOMY
    # A label only the corpus's measure-only part uses gets no rule: writing one would be
    # writing against that part.
    waiting = {c.id for c in RULES.categories.values() if not c.has_rule}
    assert not covered & waiting
    new = {c.id for c in RULES.categories.values() if c.new} - waiting
    # request_error is given by root-cause selection (a failed request on a running server),
    # and by a rule when the failure is a known one (a model with no chat template).
    assert covered - TAXONOMY - {"unclassified", "root_cause_missing", "request_error"} == (
        new - {"request_error"})
    assert all(RULES.categories[c].notes for c in new)


def test_every_rule_is_complete() -> None:
    ids = [rule.id for rule in RULES.rules]
    assert len(ids) == len(set(ids))
    for rule in RULES.rules:
        assert rule.layer in LAYERS and rule.sources and rule.fixes and rule.explanation
        if rule.kind not in ("fallback", "noise"):
            assert rule.example and rule.signatures and rule.keywords
        assert rule.file.endswith(f"{rule.id}.toml")


def test_every_rule_has_a_fix_for_a_message_cut_before_its_values() -> None:
    """A message cut short matches by keyword alone, with no values read: some step of its
    fix must need none, or the finding would say what failed and nothing to do about it."""
    for rule in RULES.rules:
        if rule.kind in ("cause", "symptom"):
            assert any(not step.when for step in rule.fixes), rule.id


def test_a_rule_defers_only_to_known_categories() -> None:
    assert RULES.get("DST002").defers_to  # type: ignore[union-attr]
    for rule in RULES.rules:
        assert set(rule.defers_to) <= set(RULES.categories), rule.id
        assert rule.category not in rule.defers_to, rule.id


def test_lookup_by_id_name_or_category() -> None:
    assert RULES.find("mem004").id == "MEM004"
    assert RULES.find("workspace-allocation-out-of-memory").id == "MEM004"
    assert RULES.find("oom_workspace_alloc").id == "MEM004"
    with pytest.raises(UsageError) as info:
        RULES.find("MEM0004")
    assert "MEM004" in info.value.fields["close_matches"]


def _user_rule(folder: Path, text: str) -> Path:
    (folder / "diagnose").mkdir(parents=True, exist_ok=True)
    path = folder / "diagnose" / "USR001.toml"
    path.write_text(text)
    return path


USER_RULE = '''
id = "USR001"
name = "our-lab-storage-quota"
summary = "The lab's storage quota was hit"
category = "disk_full"
kind = "cause"
status = "preview"
engines = ["vllm"]
layer = "host"
library = "host"
keywords = ["Disk quota exceeded"]
explanation = "Our NFS home has a quota."
example = "OSError: [Errno 122] Disk quota exceeded"

[[signature]]
pattern = 'Disk quota exceeded'

[[fix]]
text = "Ask for more quota."
'''


def test_a_user_rule_is_added_and_runs(tmp_path: Path) -> None:
    from servewise.diagnose import diagnose_text

    _user_rule(tmp_path, USER_RULE)
    rules = load_rules(tmp_path)
    assert rules.get("USR001") is not None and len(rules) == len(RULES) + 1
    root = diagnose_text("OSError: [Errno 122] Disk quota exceeded\n", rules=rules).root_cause
    assert root is not None and root.rule == "USR001"


def test_a_fact_logged_before_the_error_is_evidence(tmp_path: Path) -> None:
    """``evidence_facts``: the rule needs a fact of the run (here the model) or it does not fire."""
    from servewise.diagnose import diagnose_text

    _user_rule(tmp_path, USER_RULE.replace(
        'kind = "cause"', "kind = \"cause\"\nevidence_facts = { model = '^/scratch/' }"))
    rules = load_rules(tmp_path)
    error = "OSError: [Errno 122] Disk quota exceeded\n"
    on_scratch = "INFO non-default args: {'model': '/scratch/llama'}\n" + error
    elsewhere = "INFO non-default args: {'model': '/home/llama'}\n" + error
    found = diagnose_text(on_scratch, rules=rules).root_cause
    assert found is not None and found.rule == "USR001"
    for text in (elsewhere, error):
        other = diagnose_text(text, rules=rules).root_cause
        assert other is None or other.rule != "USR001"


@pytest.mark.parametrize(("change", "field"), [
    (("kind = \"cause\"", "kind = \"cuase\""), "kind"),
    (("layer = \"host\"", "layer = \"disk\""), "layer"),
    (("pattern = 'Disk quota exceeded'", "pattern = 'Disk (quota'"), "signature"),
    (("pattern = 'Disk quota exceeded'", "pattern = 'Disk quota (?P<flag_x>exceeded)'"),
     "signature"),
    (("keywords = [\"Disk quota exceeded\"]", "keywords = [\"quota!\"]"), "signature"),
    (("category = \"disk_full\"", "category = \"full_disk\""), "category"),
    (("text = \"Ask for more quota.\"", "text = \"Ask for {quota_gib} GiB.\""), "fix"),
    (("name = \"our-lab-storage-quota\"", "name = \"Our Lab\""), "name"),
    (("kind = \"cause\"", "kind = \"cause\"\nphase = \"nope\""), "phase"),
    (("kind = \"cause\"", "kind = \"cause\"\nevidence_facts = { quota = '.' }"),
     "evidence_facts"),
    (("kind = \"cause\"", "kind = \"cause\"\nevidence_facts = { model = '(' }"),
     "evidence_facts"),
    (("kind = \"cause\"", "kind = \"cause\"\nevidence_facts = ['model']"), "evidence_facts"),
])
def test_a_bad_rule_names_file_and_field(tmp_path: Path, change: tuple[str, str],
                                         field: str) -> None:
    path = _user_rule(tmp_path, USER_RULE.replace(*change))
    with pytest.raises(DataFileError) as info:
        load_rules(tmp_path)
    assert info.value.fields["file"] == str(path)
    assert info.value.fields["field"] == field
