"""The suite's two tiers. `make test` runs every test not marked `soak`: minutes on 2 cores, with
tests of every kind (unit, the language server, the CLI, MCP, the resident, kills, PostgreSQL,
the editors); `make soak` runs the tests marked `soak`: the crash torture, fuzzing, load, and the
rest of the end-to-end and crash tests. CI runs both, so each test runs once
(tests/unit/test_suite_tiers.py checks the Makefile, CI and what each tier holds).

Unit tests (tests/unit/) are in `make test`. An end-to-end or crash test (tests/e2e/, tests/crash/)
is in `make test` when FAST names it, or its whole module (ALL); every other one is marked `soak`
by conftest.py. Name a new end-to-end test here when it is the only one of its kind in `make test`
and takes a few seconds; a test anywhere can also be marked `@pytest.mark.soak` itself."""

from __future__ import annotations

ALL = "*"

FAST: dict[str, tuple[str, ...]] = {
    # The language server (pytest-lsp against the real server over stdio).
    "tests/e2e/test_contributing_walks.py": (ALL,),
    "tests/e2e/test_smoke.py": (ALL,),
    "tests/e2e/test_lsp_review.py": (
        "test_propose_shapes_hunk_states",
        "test_accept_open_buffer_goes_through_apply_edit",
        "test_accept_closed_file_writes_atomically_and_keeps_mode",
        "test_reject_with_feedback_and_undo_clears_it",
        "test_undo_applied_reverts_the_file",
        "test_diagnostics_lenses_actions_hover",
        "test_idempotent_by_request_id",
    ),
    "tests/e2e/test_lsp_parts.py": ("test_accept_lines_in_an_open_buffer",),
    "tests/e2e/test_lsp_tasks.py": (ALL,),
    "tests/e2e/test_multi_root.py": (ALL,),
    "tests/e2e/test_file_operations.py": (
        "test_create_with_content_then_accept_and_undo",
        "test_rename_and_edit_accepted_together",
        "test_delete_accept_and_undo_restores",
    ),
    "tests/e2e/test_lsp_hostile_input.py": (
        "test_uris_escaping_the_workspace_are_refused_and_nothing_outside_is_touched",
    ),
    # The command line.
    "tests/e2e/test_cli.py": (
        "test_propose_status_accept_all_gives_the_edited_files",
        "test_store_discovery_walks_up_and_db_overrides",
        "test_init_makes_the_store_stet_db_names",
        "test_a_closed_stdout_is_not_a_traceback",
    ),
    "tests/e2e/test_patches_git.py": (ALL,),
    "tests/e2e/test_commit_keeps.py": (
        "test_a_committed_kept_hunk_is_accepted_by_its_commit_once",
        "test_only_kept_hunks_and_only_the_agents_text",
        "test_killed_mid_way_then_exactly_once",
        "test_the_human_outputs_say_which_commit_accepted_it",
    ),
    # Who proposed a hunk and who decided it: the editor hears of a rejection sent back.
    "tests/e2e/test_who_proposed_and_decided.py": (
        "test_the_editor_hears_of_a_rejection_sent_back_and_names_the_agent",
    ),
    "tests/e2e/test_inbox.py": ("test_dropped_files_are_proposed_and_moved_to_done",),
    # MCP, over stdio and HTTP.
    "tests/e2e/test_mcp.py": (
        "test_a_task_through_every_tool",
        "test_tools_are_listed_with_descriptions_for_a_model",
        "test_acknowledged_writes_survive_a_sigkill",
        "test_wait_for_decisions_blocks_until_the_developer_decided",
    ),
    "tests/e2e/test_mcp_stdio.py": (
        "test_initialize_is_answered_while_the_sdk_is_still_loading",
        "test_ctrl_c_ends_it_with_the_store_closed_and_the_work_kept",
    ),
    "tests/e2e/test_mcp_http.py": (ALL,),
    # ACP: `stet acp` relays a whole session byte for byte between an editor and an agent.
    "tests/e2e/test_acp_relay.py": ("test_every_byte_passes_unchanged_both_ways_for_a_whole_session",),
    # ... and records what the agent proposes in the review the language server shows and decides.
    "tests/e2e/test_acp_review_in_lsp.py": (ALL,),
    # ... and, when the peers agree ACP v2 (the draft), the change recorded, its redo refused, the agent told.
    "tests/e2e/test_acp_protocol_v2.py": (ALL,),
    # ... and as a proxy component under a conductor, the change recorded (the conductor scripted from the spec).
    "tests/e2e/test_acp_conductor.py": (
        "test_a_whole_session_passes_and_the_diff_is_recorded",
        "test_the_wire_as_the_conductor_sees_it",
    ),
    # Agents: Claude Code's hooks, capture and `stet run`.
    "tests/e2e/test_claude_hooks.py": ("test_hooks_capture_each_turn_kept_in_the_files",),
    # The real agents from npm (cached installs) against the scripted model: a few seconds each.
    # Each agent with Stet's own hooks (an edit captured, rejected, told at the next start, its redo
    # denied) and its hook inputs as recorded; request changes, Qwen Code's decision told between
    # tool rounds and the documented answers' shapes without Stet are soak.
    "tests/e2e/test_real_claude_code.py": (
        "test_real_claude_code_edit_captured_rejected_and_its_redo_denied",
        "test_real_claude_code_hook_inputs_as_recorded",
    ),
    "tests/e2e/test_real_codex.py": (
        "test_real_codex_applies_a_scripted_patch_and_its_hooks_see_it",
        "test_real_codex_with_stets_hooks_edit_captured_rejected_and_its_redo_denied",
    ),
    "tests/e2e/test_real_gemini_cli.py": (
        "test_real_gemini_cli_makes_a_scripted_edit_and_its_hooks_see_it",
        "test_real_gemini_cli_with_stets_hooks_edit_captured_rejected_and_its_redo_denied",
    ),
    "tests/e2e/test_real_qwen_code.py": (
        "test_real_qwen_code_makes_a_scripted_edit_and_its_hooks_see_it",
        "test_real_qwen_code_with_stets_hooks_edit_captured_rejected_and_its_redo_denied",
    ),
    # The real ACP agents through `stet acp`: each edit recorded before the editor is shown it (3-12 s
    # each); the rest (redo, refusals, kills, the recorded shapes) is soak.
    "tests/e2e/test_real_acp_agents.py": ("test_real_acp_agent_through_stet_edit_recorded_before_the_editor_sees_it",),
    "tests/e2e/test_codex_hooks.py": ("test_a_turn_is_captured_a_rejection_told_once_and_its_redo_denied",),
    "tests/e2e/test_gemini_hooks.py": ("test_a_turn_is_captured_a_rejection_told_once_and_its_redo_denied",),
    "tests/e2e/test_copilot_hooks.py": (ALL,),
    "tests/e2e/test_cursor_hooks.py": (ALL,),
    "tests/e2e/test_qwen_hooks.py": (ALL,),
    "tests/e2e/test_capture.py": (
        "test_capture_in_place_proposes_every_kind_of_change_and_puts_the_baseline_back",
        "test_stet_run_passes_the_exit_code_and_leaves_the_output_untouched",
    ),
    # The resident process and the thin client.
    "tests/e2e/test_resident.py": (
        "test_the_resident_answers_as_the_command_in_its_own_process",
        "test_every_decision_goes_through_the_resident",
        "test_a_resident_killed_mid_accept_loses_and_doubles_nothing",
        "test_the_hooks_of_claude_code_through_the_resident",
    ),
    "tests/e2e/test_resident_run.py": ("test_the_agent_is_the_clients_child_with_the_terminals_stdin",),
    # The store, on both engines (the PostgreSQL cases skip without a cluster: .ci/with-pg).
    "tests/e2e/test_store_contract.py": (ALL,),
    "tests/e2e/test_store.py": (ALL,),
    "tests/e2e/test_tasks_service.py": (ALL,),
    "tests/e2e/test_safe_writes.py": (ALL,),
    "tests/e2e/test_postgres.py": (
        "test_two_checkouts_agent_proposes_developer_decides_agent_pulls_and_resumes",
        "test_postgresql_restarted_mid_review_nothing_unknown_is_acknowledged_and_it_reconnects",
        "test_passwords_are_masked_in_every_message",
    ),
    # Real editors (Neovim and Emacs skip where they are not installed; CI installs them).
    "tests/e2e/test_neovim.py": (ALL,),
    "tests/e2e/test_emacs.py": (ALL,),
    "tests/e2e/test_other_editors.py": (ALL,),
    # Kills: the real server, the CLI and a capture SIGKILLed and started again.
    "tests/crash/test_crash.py": (
        "test_kill_after_acknowledged_accept_file",
        "test_kill_after_acknowledged_accept_in_buffer",
        "test_kill_during_recovery_then_recover_again",
    ),
    "tests/crash/test_cli_crash.py": ("test_accept_killed_then_finished_exactly_once",),
    "tests/crash/test_capture_crash.py": ("test_capture_keep_killed_after_commit",),
    "tests/crash/test_acp_crash.py": (
        "test_killed_after_the_record_before_the_forward_then_the_session_loaded_records_nothing_twice",
    ),
    # `stet acp` SIGKILLed (as Zed stops an agent server): its reaper stops the agent's group.
    "tests/crash/test_acp_agent_reaped.py": (
        "test_stet_killed_ends_the_agents_whole_group",
        "test_a_normal_end_leaves_no_reaper_and_kills_nothing",
    ),
}

# The kinds `make test` must keep a test of (tests/unit/test_suite_tiers.py): {kind: its modules}.
KINDS: dict[str, tuple[str, ...]] = {
    "the language server": ("tests/e2e/test_lsp_review.py",),
    "the CLI": ("tests/e2e/test_cli.py",),
    "MCP": ("tests/e2e/test_mcp.py", "tests/e2e/test_mcp_stdio.py"),
    "MCP over HTTP": ("tests/e2e/test_mcp_http.py",),
    "ACP": ("tests/e2e/test_acp_relay.py",),
    "the resident": ("tests/e2e/test_resident.py",),
    "Claude Code's hooks": ("tests/e2e/test_claude_hooks.py",),
    "the real Claude Code against the scripted model": ("tests/e2e/test_real_claude_code.py",),
    "capture and stet run": ("tests/e2e/test_capture.py",),
    "kills and recovery": ("tests/crash/test_crash.py",),
    "the store contract on both engines": ("tests/e2e/test_store_contract.py",),
    "PostgreSQL": ("tests/e2e/test_postgres.py",),
    "Neovim": ("tests/e2e/test_neovim.py",),
    "Emacs": ("tests/e2e/test_emacs.py",),
}


def is_soak(nodeid: str) -> bool:
    """Whether a test (its pytest node id, relative to the repository) is in `make soak`."""
    module, _, rest = nodeid.partition("::")
    if not module.startswith(("tests/e2e/", "tests/crash/")):
        return False
    kept = FAST.get(module, ())
    return ALL not in kept and rest.split("[", 1)[0] not in kept
