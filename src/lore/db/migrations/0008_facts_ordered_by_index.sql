-- lore schema, version 8: the facts a session starts with, read in time that does not grow with the
-- space. lore_facts_ordered (migration 6) sorted every current fact of the space to keep the first
-- `max_rows` (at 100,000 facts: a scan of all of them and a top-N sort, ~25 ms of the hook's time).
-- Now current belief (as_of NULL) is read group by group, each group from an index already in the
-- order it is shown, `max_rows` at most from each, per space: those about `prefer`, those with no
-- subject, the rest. What it returns, and in which order, is unchanged (the randomized test in
-- tests/integration/test_shared_predicates.py holds it to an independent query); belief in the
-- past (as_of) still takes the general path.

CREATE INDEX facts_now_about ON facts (space, lower(subject), recorded_at DESC, lineage DESC)
    WHERE superseded_at IS NULL AND subject IS NOT NULL;
CREATE INDEX facts_now_general ON facts (space, recorded_at DESC, lineage DESC)
    WHERE superseded_at IS NULL AND subject IS NULL;
CREATE INDEX facts_now_with_subject ON facts (space, recorded_at DESC, lineage DESC)
    WHERE superseded_at IS NULL AND subject IS NOT NULL;

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
            ORDER BY lower(x.subject), x.recorded_at DESC, x.lineage DESC LIMIT max_rows) AS l
        UNION ALL
        -- current belief: no subject (none when `about` asks for one)
        SELECT l.f, 1 FROM unnest(spaces) AS s(space), LATERAL (
            SELECT x AS f FROM facts x
            WHERE as_of IS NULL AND about IS NULL AND x.space = s.space AND x.superseded_at IS NULL
              AND x.subject IS NULL
              AND x.valid_from <= coalesce(valid_at, now())
              AND (x.valid_to IS NULL OR x.valid_to > coalesce(valid_at, now()))
            ORDER BY x.recorded_at DESC, x.lineage DESC LIMIT max_rows) AS l
        UNION ALL
        -- current belief: the rest
        SELECT l.f, 2 FROM unnest(spaces) AS s(space), LATERAL (
            SELECT x AS f FROM facts x
            WHERE as_of IS NULL AND about IS NULL AND x.space = s.space AND x.superseded_at IS NULL
              AND x.subject IS NOT NULL AND (prefer IS NULL OR lower(x.subject) <> lower(prefer))
              AND x.valid_from <= coalesce(valid_at, now())
              AND (x.valid_to IS NULL OR x.valid_to > coalesce(valid_at, now()))
            ORDER BY x.recorded_at DESC, x.lineage DESC LIMIT max_rows) AS l
        UNION ALL
        -- belief at a past moment: every fact then visible, sorted (as before)
        SELECT v, CASE WHEN lower(v.subject) = lower(prefer) THEN 0 WHEN v.subject IS NULL THEN 1 ELSE 2 END
        FROM lore_facts_visible(spaces, as_of, valid_at, about) AS v
        WHERE as_of IS NOT NULL
    ) AS picked
    ORDER BY picked.grp, (picked.f).recorded_at DESC, (picked.f).lineage DESC
    LIMIT max_rows
$$;
