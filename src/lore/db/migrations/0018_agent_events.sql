-- Every hook event through one use case (docs/design.md, Agent events): what the session start, the
-- per-prompt inbox and the session end need from the database, the same through psql (the local
-- hooks) and psycopg (/api, the CLI, a spool replayed). Only adds and relaxes.

-- Every outcome of every hook is a record `lore log` lists, not only the session starts that showed
-- memory: `outcome` says which (shown, nothing to show, unavailable, a config error, two spaces
-- tied, the deadline passed, kept in the spool, a hook its agent killed), `detail` why, in lore's
-- one wording per cause (lore.core.outcomes). A config error or a tie has no space: `owner` (the
-- signed-in user; NULL locally) says whose it is. `event_key` makes a record written twice (a spool
-- replayed after a crash) one record.
ALTER TABLE injections ALTER COLUMN space DROP NOT NULL;
ALTER TABLE injections DROP CONSTRAINT injections_kind_check;
ALTER TABLE injections ADD CONSTRAINT injections_kind_check
    CHECK (kind IN ('session-start', 'prompt', 'session-end'));
ALTER TABLE injections ADD COLUMN outcome text NOT NULL DEFAULT 'shown'
    CHECK (outcome IN ('shown', 'nothing', 'unavailable', 'config', 'tie', 'deadline', 'spooled',
                       'killed', 'stored', 'failed'));
ALTER TABLE injections ADD COLUMN detail text CHECK (length(detail) <= 1000);
ALTER TABLE injections ADD COLUMN owner text CHECK (length(owner) <= 200);
ALTER TABLE injections ADD COLUMN event_key text CHECK (length(event_key) <= 200);
UPDATE injections SET owner = split_part(space, '/', 1) WHERE strpos(space, '/') > 0;
CREATE UNIQUE INDEX injections_event_key ON injections (event_key) WHERE event_key IS NOT NULL;
CREATE INDEX injections_owner_at ON injections ((coalesce(owner, '')), at);

-- The owner of a space id: the user before the slash in sign-in mode (`alice/work`), '' locally.
CREATE FUNCTION lore_space_owner(p_space text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN strpos(p_space, '/') > 0 THEN split_part(p_space, '/', 1) ELSE '' END
$$;

-- One record written (`r`: the row as JSON, keys as the columns; `at` when it happened, never later
-- than now), once per `event_key`: a second write of the same key returns the first one's id. Rows
-- past the retention are deleted a few at a time, and only the writer's own: each user's records
-- (and search counts) follow that user's `[log] retention_days`, never another's.
CREATE OR REPLACE FUNCTION lore_injection_record(r jsonb, retention_days integer) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    made bigint;
    who text := coalesce(r->>'owner', lore_space_owner(r->>'space'));
BEGIN
    INSERT INTO injections (at, kind, via, client, session_id, workspace, space, readable, shown, cut,
                            handoff, instructions, chars, budget, duration_ms, text, outcome, detail,
                            owner, event_key)
    VALUES (least(coalesce((r->>'at')::timestamptz, now()), now()),
            r->>'kind', r->>'via', left(r->>'client', 200), left(r->>'session_id', 200),
            left(r->>'workspace', 4096), r->>'space',
            ARRAY(SELECT jsonb_array_elements_text(coalesce(r->'readable', '[]'))),
            ARRAY(SELECT jsonb_array_elements_text(coalesce(r->'shown', '[]'))),
            ARRAY(SELECT jsonb_array_elements_text(coalesce(r->'cut', '[]'))),
            (r->>'handoff')::bigint,
            ARRAY(SELECT jsonb_array_elements_text(coalesce(r->'instructions', '[]'))),
            coalesce((r->>'chars')::integer, 0), coalesce((r->>'budget')::integer, 0),
            coalesce((r->>'duration_ms')::integer, 0), left(coalesce(r->>'text', ''), 10000),
            coalesce(r->>'outcome', 'shown'), left(r->>'detail', 1000), nullif(who, ''),
            left(r->>'event_key', 200))
    ON CONFLICT (event_key) WHERE event_key IS NOT NULL DO NOTHING
    RETURNING id INTO made;
    IF made IS NULL THEN
        SELECT id INTO made FROM injections WHERE event_key = r->>'event_key';
        RETURN made;
    END IF;
    DELETE FROM injections WHERE id IN (
        SELECT id FROM injections
        WHERE coalesce(owner, '') = coalesce(who, '') AND at < now() - make_interval(days => retention_days)
        LIMIT 100);
    DELETE FROM retrievals WHERE id IN (
        SELECT id FROM retrievals
        WHERE at < now() - make_interval(days => retention_days)
          AND lore_space_owner(space) = coalesce(who, '')
        LIMIT 100);
    RETURN made;
END $$;

-- What arrived for a space since the ids a session has already seen: its unread messages after
-- `p_after_message` and its inbox tasks after `p_after_task` (at most `p_max` of each, and how many
-- in all), and the newest ids now (what the session has seen once this is shown). The per-prompt
-- inbox, local (psql) and hosted (/api) alike.
CREATE FUNCTION lore_prompt_inbox(p_space text, p_after_message bigint, p_after_task bigint, p_max integer)
RETURNS json LANGUAGE sql STABLE AS $$
    SELECT json_build_object(
        'messages', coalesce((SELECT json_agg(m ORDER BY m.num)
                              FROM lore_unread_since(p_space, p_after_message, p_max) m), '[]'::json),
        'message_count', coalesce((SELECT max(total) FROM lore_unread_since(p_space, p_after_message, 1)), 0),
        'tasks', coalesce((SELECT json_agg(t ORDER BY t.lineage)
                           FROM lore_inbox_since(p_space, p_after_task, p_max) t), '[]'::json),
        'task_count', coalesce((SELECT max(total) FROM lore_inbox_since(p_space, p_after_task, 1)), 0),
        'last_message', (SELECT coalesce(max(id), 0) FROM messages),
        'last_task', (SELECT coalesce(max(lineage), 0) FROM tasks))
$$;

-- A handoff event carries when it happened (`at`): one kept in a spool while the database was down
-- and written later is written as of then, and an event older than what the row already holds (a
-- replay after a later event of the same session) changes nothing. Otherwise as in migration 0007.
CREATE OR REPLACE FUNCTION lore_handoff_record(h jsonb) RETURNS handoffs LANGUAGE plpgsql AS $$
DECLARE
    happened timestamptz := least(coalesce((h->>'at')::timestamptz, now()), now());
    started timestamptz := least(coalesce((h->>'started_at')::timestamptz, happened), happened);
    changes text[] := CASE WHEN jsonb_typeof(h->'changes') = 'array'
                           THEN ARRAY(SELECT jsonb_array_elements_text(h->'changes')) END;
    saved handoffs;
    cur notes;
    touched bigint[];
    body text;
    note_id bigint;
    stamp timestamptz;
BEGIN
    INSERT INTO handoffs AS o (space, client, session_id, root, workspace, workspace_name, event, message,
                               message_chars, changes, changed, diffstat, started_at, updated_at)
    VALUES (h->>'space', h->>'client', h->>'session_id', h->>'root', h->>'workspace', h->>'workspace_name',
            h->>'event', h->>'message', coalesce((h->>'message_chars')::int, 0), changes,
            coalesce((h->>'changed')::int, 0), h->>'diffstat', started, happened)
    ON CONFLICT (space, client, session_id) DO UPDATE SET
        root = EXCLUDED.root,
        workspace = EXCLUDED.workspace,
        workspace_name = EXCLUDED.workspace_name,
        event = EXCLUDED.event,
        message = coalesce(EXCLUDED.message, o.message),
        message_chars = CASE WHEN EXCLUDED.message IS NULL THEN o.message_chars ELSE EXCLUDED.message_chars END,
        changes = coalesce(EXCLUDED.changes, o.changes),
        changed = CASE WHEN EXCLUDED.changes IS NULL THEN o.changed ELSE EXCLUDED.changed END,
        diffstat = CASE WHEN EXCLUDED.changes IS NULL THEN o.diffstat ELSE EXCLUDED.diffstat END,
        started_at = least(o.started_at, EXCLUDED.started_at),
        updated_at = greatest(EXCLUDED.updated_at, o.started_at),
        events = o.events + 1
    WHERE o.updated_at <= EXCLUDED.updated_at
    RETURNING * INTO saved;
    IF saved.id IS NULL THEN  -- an older event than the one stored: nothing to change
        SELECT * INTO saved FROM handoffs
        WHERE space = h->>'space' AND client = h->>'client' AND session_id = h->>'session_id';
        RETURN saved;
    END IF;

    SELECT coalesce(array_agg(t ORDER BY t), '{}') INTO touched FROM (
        SELECT DISTINCT t FROM (
            SELECT unnest(saved.tasks) AS t
            UNION
            SELECT e.lineage FROM task_events e
            WHERE e.space = saved.space AND e.at >= saved.started_at
              AND (e.workspace = saved.root OR starts_with(e.workspace, saved.root || '/'))
            UNION
            SELECT n.lineage FROM notes n
            WHERE n.space = saved.space AND n.kind = 'task' AND n.superseded_at IS NULL
              AND n.recorded_at >= saved.started_at
              AND (n.workspace = saved.root OR starts_with(n.workspace, saved.root || '/'))
        ) u ORDER BY t DESC LIMIT 50
    ) s;
    UPDATE handoffs SET tasks = touched WHERE id = saved.id RETURNING * INTO saved;

    -- The note's text (what search finds), from the row as it now is.
    body := format('Handoff from %s in %s (session %s).', saved.client, saved.workspace_name,
                   saved.session_id) || E'\n\nWorkspace: ' || saved.workspace;
    IF saved.message IS NOT NULL THEN
        body := body || E'\n\nFinal message:\n' || saved.message;
    END IF;
    IF saved.changes IS NOT NULL AND saved.changed = 0 THEN
        body := body || E'\n\nNo uncommitted changes.';
    ELSIF saved.changes IS NOT NULL THEN
        body := body || format(E'\n\nUncommitted changes (%s):\n', saved.changed)
                     || array_to_string(saved.changes, E'\n')
                     || CASE WHEN saved.changed > cardinality(saved.changes)
                             THEN format(E'\n... %s more', saved.changed - cardinality(saved.changes))
                             ELSE '' END
                     || coalesce(E'\n\ngit diff --stat HEAD:\n' || saved.diffstat, '');
    END IF;
    IF cardinality(touched) > 0 THEN
        body := body || E'\n\nTasks touched: ' || (SELECT string_agg('n_' || t, ', ') FROM unnest(touched) t);
    END IF;
    WHILE octet_length(body) > 32000 LOOP  -- notes hold 32 KiB; multibyte text can exceed it
        body := left(body, length(body) * 9 / 10);
    END LOOP;
    IF saved.note IS NULL THEN
        INSERT INTO notes (lineage, space, kind, title, body, tags, source, workspace)
        VALUES (nextval('note_lineage_seq'), saved.space, 'handoff', h->>'title', body,
                ARRAY['handoff', saved.client], saved.client, saved.workspace)
        RETURNING lineage INTO note_id;
        UPDATE handoffs SET note = note_id WHERE id = saved.id RETURNING * INTO saved;
    ELSE
        SELECT * INTO cur FROM notes WHERE lineage = saved.note AND superseded_at IS NULL FOR UPDATE;
        -- Forgotten (no current version): left so. Unchanged: no new version.
        IF FOUND AND (cur.body IS DISTINCT FROM body OR cur.title IS DISTINCT FROM h->>'title') THEN
            UPDATE notes SET superseded_at = greatest(clock_timestamp(), recorded_at)
            WHERE version_id = cur.version_id RETURNING superseded_at INTO stamp;
            INSERT INTO notes (lineage, space, kind, title, body, tags, source, workspace, recorded_at)
            VALUES (saved.note, saved.space, 'handoff', h->>'title', body, ARRAY['handoff', saved.client],
                    saved.client, saved.workspace, stamp);
        END IF;
    END IF;
    RETURN saved;
END $$;
