-- The order facts are shown in is lore_facts_ordered's alone (docs/design.md, Session start): no
-- caller sorts them again. An aggregate over a subquery keeps the subquery's order only in practice,
-- so the session start's document now says it: the facts in the function's own order (WITH
-- ORDINALITY), and /api, the CLI and recall_facts read the same (lore.store.facts.page). Only replaces
-- a function; the document is the same.
CREATE OR REPLACE FUNCTION lore_session_snapshot(
    p_spaces text[], p_workspace text, p_max_rows integer, p_space text, p_root text,
    p_handoff_hours integer, p_doing_max integer, p_skip text[], p_instructions_max integer
) RETURNS json LANGUAGE sql STABLE AS $$
    WITH counts AS (SELECT * FROM lore_inbox_counts(p_space)),
    last AS (
        SELECT h.* FROM lore_handoff_last(p_space, p_root, make_interval(hours => p_handoff_hours)) h
        WHERE p_handoff_hours > 0
    ),
    doing AS (SELECT * FROM lore_tasks_doing(p_space, p_doing_max) WHERE EXISTS (SELECT 1 FROM last))
    SELECT json_build_object(
        'now', now(),
        'total', (SELECT count(*) FROM lore_facts_visible(p_spaces)),
        'facts', coalesce((
            SELECT json_agg(f ORDER BY o.ordinality) FROM lore_facts_ordered(p_spaces, p_workspace, p_max_rows)
                WITH ORDINALITY AS o,
                LATERAL (SELECT o.lineage, o.version_id, o.space, o.recorded_at, o.superseded_at, o.source,
                                o.workspace, o.statement, o.subject, o.valid_from, o.valid_to, o.stated_at) f
            ), '[]'::json),
        'inbox', (SELECT inbox FROM counts),
        'unread', (SELECT unread FROM counts),
        'handoff', (SELECT row_to_json(l) FROM last l),
        'doing', coalesce((SELECT json_agg(json_build_array(d.lineage, d.title)
                                            ORDER BY d.updated_at DESC, d.lineage DESC) FROM doing d),
                          '[]'::json),
        'doing_count', coalesce((SELECT max(d.total) FROM doing d), 0),
        'instructions', coalesce((
            SELECT json_agg(i) FROM lore_instructions_at(p_space, p_root, p_skip, p_instructions_max) i
            WHERE p_skip IS NOT NULL), '[]'::json),
        'superseded', coalesce((
            SELECT json_agg(DISTINCT x.item) FROM tidy_actions t, unnest(t.items) AS x(item)
            WHERE t.space = ANY(p_spaces) AND t.action = 'supersede' AND t.undone_at IS NULL), '[]'::json),
        'kept', lore_facts_kept(p_spaces),
        'expired', (SELECT count(*) FROM facts f
                    WHERE f.space = ANY(p_spaces) AND f.superseded_at IS NULL AND f.valid_to IS NOT NULL
                      AND f.valid_to <= now() AND f.valid_to > now() - interval '30 days'))
$$;
