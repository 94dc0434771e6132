-- Month six, round 2 (docs/design.md, Duplicates and conflicts). Only adds (and replaces functions
-- with the same signatures).

-- Facts carry vectors, as notes do: made by the same embedder, by the write itself when the embedder
-- answers in time, else by the background worker later (lore.store.embed_worker). The write-time
-- check names likely restatements by meaning beside words; `lore tidy` lists them.
ALTER TABLE facts ADD COLUMN embedding vector, ADD COLUMN embedding_model text,
    ADD CONSTRAINT facts_embedding_check CHECK ((embedding IS NULL) = (embedding_model IS NULL));
CREATE INDEX facts_hnsw_minilm ON facts USING hnsw ((embedding::vector(384)) vector_cosine_ops)
    WHERE embedding_model = 'all-MiniLM-L6-v2-int8' AND superseded_at IS NULL;
CREATE INDEX facts_hnsw_potion ON facts USING hnsw ((embedding::vector(256)) vector_cosine_ops)
    WHERE embedding_model = 'potion-base-8M' AND superseded_at IS NULL;
CREATE INDEX facts_unembedded ON facts (version_id) WHERE embedding IS NULL AND superseded_at IS NULL;

-- A fact's own time: when its statement was made. NULL (every ordinary write) means `recorded_at`;
-- a version that brings back an earlier statement (a tidy undo or redo believing a merged fact again,
-- a merge's revision reverted) carries that statement's time, so it goes back to its place: it is
-- not "newer" than what was said after it (the order of session starts, recall and tidy, the
-- "may be contradicted by newer" marks, the Tidy page's choice of what to keep).
ALTER TABLE facts ADD COLUMN stated_at timestamptz;
CREATE INDEX facts_stated_about ON facts (space, lower(subject), coalesce(stated_at, recorded_at) DESC, lineage DESC)
    WHERE superseded_at IS NULL AND subject IS NOT NULL;
CREATE INDEX facts_stated_general ON facts (space, coalesce(stated_at, recorded_at) DESC, lineage DESC)
    WHERE superseded_at IS NULL AND subject IS NULL;
CREATE INDEX facts_stated_with_subject ON facts (space, coalesce(stated_at, recorded_at) DESC, lineage DESC)
    WHERE superseded_at IS NULL AND subject IS NOT NULL;
DROP INDEX facts_now_about;
DROP INDEX facts_now_general;
DROP INDEX facts_now_with_subject;

-- lore_facts_ordered (migration 0008) in the facts' own time: the same groups, each read from an
-- index already in the order it is shown.
CREATE OR REPLACE FUNCTION lore_facts_ordered(
    spaces text[], prefer text DEFAULT NULL, max_rows bigint DEFAULT NULL,
    as_of timestamptz DEFAULT NULL, valid_at timestamptz DEFAULT NULL, about text DEFAULT NULL
) RETURNS SETOF facts LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT (f).* FROM (
        -- current belief: about `prefer` (or only those about `about`)
        SELECT l.f, 0 AS grp FROM unnest(spaces) AS s(space), LATERAL (
            SELECT x AS f FROM facts x
            WHERE as_of IS NULL AND x.space = s.space AND x.superseded_at IS NULL AND x.subject IS NOT NULL
              AND lower(x.subject) = lower(coalesce(about, prefer))
              AND x.valid_from <= coalesce(valid_at, now())
              AND (x.valid_to IS NULL OR x.valid_to > coalesce(valid_at, now()))
            ORDER BY lower(x.subject), coalesce(x.stated_at, x.recorded_at) DESC, x.lineage DESC
            LIMIT max_rows) AS l
        UNION ALL
        -- current belief: no subject (none when `about` asks for one)
        SELECT l.f, 1 FROM unnest(spaces) AS s(space), LATERAL (
            SELECT x AS f FROM facts x
            WHERE as_of IS NULL AND about IS NULL AND x.space = s.space AND x.superseded_at IS NULL
              AND x.subject IS NULL
              AND x.valid_from <= coalesce(valid_at, now())
              AND (x.valid_to IS NULL OR x.valid_to > coalesce(valid_at, now()))
            ORDER BY coalesce(x.stated_at, x.recorded_at) DESC, x.lineage DESC LIMIT max_rows) AS l
        UNION ALL
        -- current belief: the rest
        SELECT l.f, 2 FROM unnest(spaces) AS s(space), LATERAL (
            SELECT x AS f FROM facts x
            WHERE as_of IS NULL AND about IS NULL AND x.space = s.space AND x.superseded_at IS NULL
              AND x.subject IS NOT NULL AND (prefer IS NULL OR lower(x.subject) <> lower(prefer))
              AND x.valid_from <= coalesce(valid_at, now())
              AND (x.valid_to IS NULL OR x.valid_to > coalesce(valid_at, now()))
            ORDER BY coalesce(x.stated_at, x.recorded_at) DESC, x.lineage DESC LIMIT max_rows) AS l
        UNION ALL
        -- belief in the past: the general path
        SELECT v AS f, CASE WHEN lower(v.subject) = lower(prefer) THEN 0 WHEN v.subject IS NULL THEN 1 ELSE 2 END
        FROM lore_facts_visible(spaces, as_of, valid_at, about) AS v
        WHERE as_of IS NOT NULL
    ) AS picked
    ORDER BY picked.grp, coalesce((picked.f).stated_at, (picked.f).recorded_at) DESC, (picked.f).lineage DESC
    LIMIT max_rows
$$;

-- The fact groups a person or an agent said to keep as they are (`lore tidy keep`, not undone): a
-- session start does not mark one of them "superseded?" by another.
CREATE FUNCTION lore_facts_kept(p_spaces text[]) RETURNS json LANGUAGE sql STABLE AS $$
    SELECT coalesce(json_agg(t.items ORDER BY t.id), '[]'::json) FROM tidy_actions t
    WHERE t.space = ANY(p_spaces) AND t.action = 'keep' AND t.undone_at IS NULL
      AND t.items[1] LIKE 'f\_%'
$$;

-- The session start's document (migration 0015) with each fact's own time and the groups kept.
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
                       statement, subject, valid_from, valid_to, stated_at
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
        'kept', lore_facts_kept(p_spaces),
        'expired', (SELECT count(*) FROM facts f
                    WHERE f.space = ANY(p_spaces) AND f.superseded_at IS NULL AND f.valid_to IS NOT NULL
                      AND f.valid_to <= now() AND f.valid_to > now() - interval '30 days'))
$$;
