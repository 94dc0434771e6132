-- Memory that stays clean (docs/design.md, Duplicates and conflicts): what the write-time check, the
-- session start and `lore tidy` need from the database. Only adds.

-- The words of each fact, for the write-time check's candidates (the current facts of a space that
-- share a word with a new one, best first): the same English configuration as notes.tsv.
ALTER TABLE facts ADD COLUMN words tsvector GENERATED ALWAYS AS (to_tsvector('english', statement)) STORED;
CREATE INDEX facts_words ON facts USING gin (words) WHERE superseded_at IS NULL;

-- A text's words as a query matching any of them (`'deploy' | 'render' | 'fly.io'`), from the first
-- `p_chars` characters (a long note's head: a copy of it shares those), never a syntax error: the
-- lexemes go through websearch_to_tsquery's `or`, with the `simple` configuration that keeps them as
-- they are.
CREATE FUNCTION lore_any_words(p_text text, p_chars integer DEFAULT 2000) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT websearch_to_tsquery('simple', array_to_string(
        tsvector_to_array(to_tsvector('english', left(p_text, p_chars))), ' or '))
$$;

-- Facts whose valid_to has passed: the session start counts the recent ones (already hidden).
CREATE INDEX facts_expired ON facts (space, valid_to) WHERE superseded_at IS NULL AND valid_to IS NOT NULL;

-- What `lore tidy`, the web UI's Tidy page and `remember_fact(supersedes=...)` did, one row per act:
--   merge      `items` forgotten with the reason "merged into <target>" (the target revised first when
--              the merge gave it a new statement: `revised` is that version);
--   keep       `items` say different things: tidy stops listing them together;
--   forget     `items` forgotten from tidy (stale), with `reason`;
--   supersede  the fact `target` replaces `items` (an agent confirmed a conflict): they stay current
--              and searchable, but session starts leave them out.
-- `undone_at` marks an act taken back (a merge's facts remembered again, its revision reverted).
CREATE TABLE tidy_actions (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT now(),
    space       text        NOT NULL,
    action      text        NOT NULL CHECK (action IN ('merge', 'keep', 'forget', 'supersede')),
    items       text[]      NOT NULL CHECK (cardinality(items) BETWEEN 1 AND 100),
    target      text,
    reason      text        CHECK (length(reason) <= 1000),
    revised     bigint,
    source      text        NOT NULL,
    workspace   text,
    client_name text        CHECK (length(client_name) <= 200),
    undone_at   timestamptz,
    undone_by   text
);
CREATE INDEX tidy_actions_space ON tidy_actions (space, at DESC);
CREATE INDEX tidy_actions_items ON tidy_actions USING gin (items);
CREATE INDEX tidy_actions_superseded ON tidy_actions (space) WHERE action = 'supersede' AND undone_at IS NULL;

-- Session start also reads the facts an agent said are replaced (left out, counted) and how many
-- facts stopped being true in the last 30 days (already hidden by their valid_to: counted).
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
            SELECT json_agg(f) FROM (
                SELECT lineage, version_id, space, recorded_at, superseded_at, source, workspace,
                       statement, subject, valid_from, valid_to
                FROM lore_facts_ordered(p_spaces, p_workspace, p_max_rows)) f), '[]'::json),
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
        'expired', (SELECT count(*) FROM facts f
                    WHERE f.space = ANY(p_spaces) AND f.superseded_at IS NULL AND f.valid_to IS NOT NULL
                      AND f.valid_to <= now() AND f.valid_to > now() - interval '30 days'))
$$;
