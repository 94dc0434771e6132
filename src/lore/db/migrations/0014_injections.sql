-- What lore told each agent: one row per injection (a session start, a per-prompt note), written by
-- the local hook in the same psql call as its read, by /api/session-start for the hosted hook, and by
-- `lore session-start`. The text is kept as it was sent (at most 10,000 characters: a session start
-- is at most 9,500), so a person can see exactly what the agent saw. Items are public ids (f_N, n_N,
-- m_N) in the order shown; `cut` are the facts read but left out by the budget. Rows older than the
-- retention (`[log] retention_days`, default 90) are deleted by lore_injection_record itself.
CREATE TABLE injections (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at           timestamptz NOT NULL DEFAULT now(),
    kind         text        NOT NULL CHECK (kind IN ('session-start', 'prompt')),
    via          text        NOT NULL CHECK (via IN ('hook', 'api', 'cli')),
    client       text        NOT NULL CHECK (length(client) <= 200),
    session_id   text        CHECK (length(session_id) <= 200),
    workspace    text        NOT NULL CHECK (length(workspace) <= 4096),
    space        text        NOT NULL,
    readable     text[]      NOT NULL,
    shown        text[]      NOT NULL,
    cut          text[]      NOT NULL,
    handoff      bigint,                 -- the handoff (handoffs.id) the text led with
    instructions text[]      NOT NULL,   -- instruction sections listed (note ids)
    chars        integer     NOT NULL,
    budget       integer     NOT NULL,
    duration_ms  integer     NOT NULL,
    text         text        NOT NULL CHECK (length(text) <= 10000)
);
CREATE INDEX injections_space_at ON injections (space, at DESC);
CREATE INDEX injections_at ON injections (at);
CREATE INDEX injections_shown ON injections USING gin (shown);
CREATE INDEX injections_cut ON injections USING gin (cut);

-- What search_notes returned, per call (the usage counts' "returned"): ids only, never the query.
CREATE TABLE retrievals (
    id        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        timestamptz NOT NULL DEFAULT now(),
    space     text        NOT NULL,
    client    text        NOT NULL,
    returned  text[]      NOT NULL
);
CREATE INDEX retrievals_returned ON retrievals USING gin (returned);
CREATE INDEX retrievals_at ON retrievals (at);

-- One injection recorded (`r`: the row as JSON, keys as the columns), and the rows past the retention
-- deleted (a few at a time: a first run after a long time does not stall a hook). Returns its id.
CREATE FUNCTION lore_injection_record(r jsonb, retention_days integer) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    made bigint;
BEGIN
    INSERT INTO injections (kind, via, client, session_id, workspace, space, readable, shown, cut, handoff,
                            instructions, chars, budget, duration_ms, text)
    VALUES (r->>'kind', r->>'via', left(r->>'client', 200), left(r->>'session_id', 200),
            left(r->>'workspace', 4096), r->>'space',
            ARRAY(SELECT jsonb_array_elements_text(r->'readable')),
            ARRAY(SELECT jsonb_array_elements_text(r->'shown')),
            ARRAY(SELECT jsonb_array_elements_text(r->'cut')),
            (r->>'handoff')::bigint,
            ARRAY(SELECT jsonb_array_elements_text(r->'instructions')),
            (r->>'chars')::integer, (r->>'budget')::integer, (r->>'duration_ms')::integer,
            left(r->>'text', 10000))
    RETURNING id INTO made;
    DELETE FROM injections WHERE id IN (
        SELECT id FROM injections WHERE at < now() - make_interval(days => retention_days) LIMIT 100);
    DELETE FROM retrievals WHERE id IN (
        SELECT id FROM retrievals WHERE at < now() - make_interval(days => retention_days) LIMIT 100);
    RETURN made;
END $$;

-- How each item of a space was used: shown at session start, cut by the budget, returned by
-- search_notes, marked irrelevant (for some query), and when it was last shown and last returned.
CREATE FUNCTION lore_usage(p_spaces text[], p_ids text[])
RETURNS TABLE (item text, shown bigint, cut bigint, returned bigint, irrelevant bigint,
               last_shown timestamptz, last_returned timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT i.item,
           (SELECT count(*) FROM injections j WHERE j.shown @> ARRAY[i.item] AND j.space = ANY(p_spaces)),
           (SELECT count(*) FROM injections j WHERE j.cut @> ARRAY[i.item] AND j.space = ANY(p_spaces)),
           (SELECT count(*) FROM retrievals r WHERE r.returned @> ARRAY[i.item] AND r.space = ANY(p_spaces)),
           (SELECT count(*) FROM irrelevant x WHERE 'n_' || x.note = i.item AND x.space = ANY(p_spaces)),
           (SELECT max(j.at) FROM injections j WHERE j.shown @> ARRAY[i.item] AND j.space = ANY(p_spaces)),
           (SELECT max(r.at) FROM retrievals r WHERE r.returned @> ARRAY[i.item] AND r.space = ANY(p_spaces))
    FROM unnest(p_ids) AS i(item)
$$;
