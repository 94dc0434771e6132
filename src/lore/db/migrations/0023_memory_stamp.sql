-- The memory stamp (docs/design.md, Agent events, "Speed"): a number that grows whenever anything a
-- session start reads changes, cheap to read, so that a hook can tell in one query whether the text it
-- composed last time for a workspace is still the text it would compose now. Only adds.
--
-- Every write to what a session start reads appends one row per space it touched to memory_changes,
-- numbered from one sequence, by statement-level triggers (no row of its own to lock: writers never
-- wait for each other here). The stamp of a set of spaces is the newest number among them. A text
-- composed from a snapshot in which no transaction was in progress (`quiet`) stays right for as long
-- as the stamp is unchanged: every change committed later took its number later, so it is higher.
CREATE SEQUENCE memory_change_seq;
CREATE TABLE memory_changes (
    space text   NOT NULL,
    seq   bigint NOT NULL DEFAULT nextval('memory_change_seq')
);
CREATE INDEX memory_changes_newest ON memory_changes (space, seq DESC);

-- TG_ARGV[0]: the column holding the space (messages: to_space). One trigger per event (a trigger
-- with transition tables takes one event).
CREATE FUNCTION lore_memory_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        EXECUTE format('INSERT INTO memory_changes (space) SELECT DISTINCT %I FROM new_rows', TG_ARGV[0]);
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        EXECUTE format('INSERT INTO memory_changes (space) SELECT DISTINCT %I FROM old_rows', TG_ARGV[0]);
    END IF;
    RETURN NULL;
END $$;

DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT * FROM (VALUES ('facts', 'space'), ('notes', 'space'), ('tasks', 'space'),
                                   ('messages', 'to_space'), ('handoffs', 'space'),
                                   ('tidy_actions', 'space'), ('markdown_sections', 'space')) AS v(name, col)
    LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS new_rows '
                       'FOR EACH STATEMENT EXECUTE FUNCTION lore_memory_changed(%L)',
                       t.name || '_changed_ins', t.name, t.col);
        EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING OLD TABLE AS old_rows '
                       'NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lore_memory_changed(%L)',
                       t.name || '_changed_upd', t.name, t.col);
        EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS old_rows '
                       'FOR EACH STATEMENT EXECUTE FUNCTION lore_memory_changed(%L)',
                       t.name || '_changed_del', t.name, t.col);
    END LOOP;
END $$;

-- The newest change among `p_spaces` (0: none recorded): one index probe per space.
CREATE FUNCTION lore_memory_stamp(p_spaces text[]) RETURNS bigint LANGUAGE sql STABLE AS $$
    SELECT coalesce(max(x.seq), 0) FROM unnest(p_spaces) AS s(space),
        LATERAL (SELECT c.seq FROM memory_changes c WHERE c.space = s.space ORDER BY c.seq DESC LIMIT 1) x
$$;

-- A session start's read with what a kept text needs, in one statement (one snapshot): the snapshot
-- (lore_session_snapshot's document), the stamp of the spaces read, whether no other transaction
-- was writing (`quiet`), the snapshot's xmax, and when the text would change with no write at all
-- (`next_change`: a fact's valid_from or valid_to reached, or an expired one leaving the 30 days it
-- is counted for).
--
-- `quiet`: no transaction in the snapshot's in-progress list, and none holding a transaction id at
-- all (pg_locks: a snapshot does not list the transactions whose ids are at or above its xmax). The
-- reader asks lore_snapshot_xmax() again in a later statement: an unchanged xmax means no transaction
-- ended in between, so none could have ended between this snapshot and the look at pg_locks.
CREATE FUNCTION lore_session_start_read(
    p_spaces text[], p_workspace text, p_max_rows integer, p_space text, p_root text,
    p_handoff_hours integer, p_doing_max integer, p_skip text[], p_instructions_max integer
) RETURNS json LANGUAGE sql STABLE AS $$
    SELECT json_build_object(
        'snapshot', lore_session_snapshot(p_spaces, p_workspace, p_max_rows, p_space, p_root,
                                          p_handoff_hours, p_doing_max, p_skip, p_instructions_max),
        'stamp', lore_memory_stamp(p_spaces),
        'quiet', NOT EXISTS (SELECT 1 FROM pg_snapshot_xip(pg_current_snapshot()))
                 AND NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'transactionid'
                                   AND l.pid IS DISTINCT FROM pg_backend_pid()),
        'xmax', pg_snapshot_xmax(pg_current_snapshot())::text,
        'next_change', (
            SELECT min(t) FROM (
                SELECT min(f.valid_from) AS t FROM facts f
                WHERE f.space = ANY(p_spaces) AND f.superseded_at IS NULL AND f.valid_from > now()
                UNION ALL
                SELECT min(f.valid_to) FROM facts f
                WHERE f.space = ANY(p_spaces) AND f.superseded_at IS NULL AND f.valid_to > now()
                UNION ALL
                SELECT min(f.valid_to) + interval '30 days' FROM facts f
                WHERE f.space = ANY(p_spaces) AND f.superseded_at IS NULL AND f.valid_to <= now()
                  AND f.valid_to > now() - interval '30 days') x))
$$;

-- The xmax of a new snapshot (see lore_session_start_read).
CREATE FUNCTION lore_snapshot_xmax() RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT pg_snapshot_xmax(pg_current_snapshot())::text
$$;

-- The record of a session start that shows a kept text again, written only when the stamp of its
-- spaces is still `p_stamp` (nothing it was made from changed); NULL otherwise (nothing written).
CREATE FUNCTION lore_session_start_again(p_spaces text[], p_stamp bigint, r jsonb, retention_days integer)
RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    IF lore_memory_stamp(p_spaces) <> p_stamp THEN
        RETURN NULL;
    END IF;
    RETURN lore_injection_record(r, retention_days);
END $$;

-- The change rows older than each space's newest are not needed (the stamp reads the newest only):
-- removed a batch at a time by session starts, never waiting on another remover.
CREATE FUNCTION lore_memory_changes_trim(p_spaces text[]) RETURNS integer LANGUAGE sql AS $$
    WITH old AS (
        SELECT c.ctid FROM memory_changes c
        WHERE c.space = ANY(p_spaces)
          AND c.seq < (SELECT max(n.seq) FROM memory_changes n WHERE n.space = c.space)
        LIMIT 1000 FOR UPDATE SKIP LOCKED
    ), gone AS (DELETE FROM memory_changes WHERE ctid IN (SELECT ctid FROM old) RETURNING 1)
    SELECT count(*)::integer FROM gone
$$;
