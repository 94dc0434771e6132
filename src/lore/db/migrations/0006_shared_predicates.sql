-- The predicates every reader shares, defined once here and called by facts.query and facts.count
-- (psycopg), the session-start hook (psql, no driver), /api and the web UI, so that they agree by
-- construction. All are plain SQL functions the planner inlines into the calling query.

-- Facts visible at belief time `as_of` and valid time `valid_at` (NULL: now) in `spaces`,
-- optionally only those about `about` (case-insensitive). Unordered.
CREATE FUNCTION lore_facts_visible(
    spaces text[], as_of timestamptz DEFAULT NULL, valid_at timestamptz DEFAULT NULL,
    about text DEFAULT NULL
) RETURNS SETOF facts LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT * FROM facts f
    WHERE f.space = ANY(spaces)
      AND (f.superseded_at IS NULL OR (as_of IS NOT NULL AND f.superseded_at > as_of))
      AND (as_of IS NULL OR f.recorded_at <= as_of)
      AND f.valid_from <= coalesce(valid_at, now())
      AND (f.valid_to IS NULL OR f.valid_to > coalesce(valid_at, now()))
      AND (about IS NULL OR lower(f.subject) = lower(about))
$$;

-- The same facts in the order they are shown and injected: those about `prefer` (the workspace)
-- first, then those with no subject, then the rest; newest belief first inside each group, the
-- larger lineage first on a tie. At most `max_rows` (NULL: all).
CREATE FUNCTION lore_facts_ordered(
    spaces text[], prefer text DEFAULT NULL, max_rows bigint DEFAULT NULL,
    as_of timestamptz DEFAULT NULL, valid_at timestamptz DEFAULT NULL, about text DEFAULT NULL
) RETURNS SETOF facts LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT * FROM lore_facts_visible(spaces, as_of, valid_at, about) f
    ORDER BY CASE WHEN lower(f.subject) = lower(prefer) THEN 0 WHEN f.subject IS NULL THEN 1 ELSE 2 END,
             f.recorded_at DESC, f.lineage DESC
    LIMIT max_rows
$$;

-- What waits for `target`: tasks in its inbox (whose note is not forgotten) and unread messages.
CREATE FUNCTION lore_inbox_counts(target text, OUT inbox bigint, OUT unread bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT (SELECT count(*) FROM tasks t
            WHERE t.space = target AND t.status = 'inbox' AND EXISTS (
                SELECT 1 FROM notes n WHERE n.lineage = t.lineage AND n.superseded_at IS NULL)),
           (SELECT count(*) FROM messages m WHERE m.to_space = target AND m.read_at IS NULL)
$$;
