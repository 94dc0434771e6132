-- lore schema, version 7: handoffs. What an agent session left behind when a turn or the session
-- ended, written by `lore hook session-end` without any model: the agent's final message, the working
-- tree's changes at that moment (git status and diff --stat) and the tasks it touched. One row per
-- (space, client, session): each later event of the same session updates it. The next session of ANY
-- agent in the same workspace starts with a short "Last session here" block made from it.
--
-- A handoff is also a note of kind `handoff`, so search_notes finds it like any note (and the
-- embedding worker embeds it later). The note is versioned like every note: a new event that changes
-- the text closes the current version and writes the next of the same lineage; one that changes
-- nothing writes no version. A forgotten handoff note stays forgotten (the row is still updated but
-- no longer shown); `lore purge n_N` erases the note and its saved.
--
-- Both the hook (psql, no driver) and lore.handoffs (psycopg) write through lore_handoff_record and
-- read through lore_handoff_last, so the rules live here once.

-- Relax the kinds CHECK of notes to accept `handoff` (found by its text, whatever its name).
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT c.conname FROM pg_constraint c
        WHERE c.conrelid = 'notes'::regclass AND c.contype = 'c'
          AND strpos(pg_get_constraintdef(c.oid), '''decision''::text') > 0
    LOOP
        EXECUTE format('ALTER TABLE notes DROP CONSTRAINT %I', r.conname);
    END LOOP;
END $$;
ALTER TABLE notes ADD CONSTRAINT notes_kind_check CHECK (kind IN ('brief', 'product', 'pattern', 'tech',
    'active', 'progress', 'devenv', 'task', 'plan', 'decision', 'note', 'handoff'));

CREATE TABLE handoffs (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    space          text        NOT NULL
                               CHECK (space ~ '^([A-Za-z0-9][A-Za-z0-9_.@-]{0,63}/)?[A-Za-z0-9_.-]{1,64}$'),
    client         text        NOT NULL CHECK (length(client) BETWEEN 1 AND 64),
    session_id     text        NOT NULL CHECK (length(session_id) BETWEEN 1 AND 200),
    root           text        NOT NULL CHECK (length(root) BETWEEN 1 AND 4096),  -- "here": the git top-level (or directory)
    workspace      text        NOT NULL CHECK (length(workspace) BETWEEN 1 AND 4096),  -- where the agent ran
    workspace_name text        NOT NULL CHECK (length(workspace_name) BETWEEN 1 AND 255),
    event          text        NOT NULL CHECK (length(event) BETWEEN 1 AND 64),  -- the event that wrote it last
    message        text        CHECK (message IS NULL OR length(message) BETWEEN 1 AND 4000),
    message_chars  int         NOT NULL DEFAULT 0 CHECK (message_chars >= 0),  -- before it was cut
    changes        text[]      CHECK (changes IS NULL OR cardinality(changes) <= 50),  -- NULL: no git here
    changed        int         NOT NULL DEFAULT 0 CHECK (changed >= 0),  -- all changed paths (changes: the first 50)
    diffstat       text        CHECK (diffstat IS NULL OR length(diffstat) <= 4000),
    tasks          bigint[]    NOT NULL DEFAULT '{}' CHECK (cardinality(tasks) <= 50),  -- n_<lineage> touched
    note           bigint,                                                 -- n_<note>: the searchable note
    events         int         NOT NULL DEFAULT 1 CHECK (events >= 1),     -- how often the hook wrote it
    started_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (space, client, session_id),
    CHECK (updated_at >= started_at)
);
CREATE INDEX handoffs_here ON handoffs (space, root, updated_at DESC);
CREATE INDEX handoffs_recent ON handoffs (space, updated_at DESC);
CREATE INDEX handoffs_note ON handoffs (note) WHERE note IS NOT NULL;
-- The tasks a session touched: the task events of a space since a moment.
CREATE INDEX task_events_by_space ON task_events (space, at);

-- Write (or update) the handoff of one session, and its note. `h` holds the fields already bounded
-- and with credentials redacted by lore.capture: space, client, session_id, root, workspace,
-- workspace_name, event, message, message_chars, changes (NULL: unknown), changed, diffstat,
-- started_at, title. A field this event does not know (a message, git) keeps its earlier value.
-- The tasks touched are found here: task events and task notes written from this workspace (or
-- beneath it) in this space since the session started.
CREATE FUNCTION lore_handoff_record(h jsonb) RETURNS handoffs LANGUAGE plpgsql AS $$
DECLARE
    started timestamptz := least(coalesce((h->>'started_at')::timestamptz, now()), now());
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
                               message_chars, changes, changed, diffstat, started_at)
    VALUES (h->>'space', h->>'client', h->>'session_id', h->>'root', h->>'workspace', h->>'workspace_name',
            h->>'event', h->>'message', coalesce((h->>'message_chars')::int, 0), changes,
            coalesce((h->>'changed')::int, 0), h->>'diffstat', started)
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
        updated_at = greatest(now(), o.started_at),
        events = o.events + 1
    RETURNING * INTO saved;

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

-- The last handoff "here": of `space`, for the workspace root `root`, written within `max_age`
-- (NULL: any age), whose note is not forgotten.
CREATE FUNCTION lore_handoff_last(space text, root text, max_age interval DEFAULT NULL)
RETURNS SETOF handoffs LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT h.* FROM handoffs h
    WHERE h.space = lore_handoff_last.space AND h.root = lore_handoff_last.root
      AND (max_age IS NULL OR h.updated_at > now() - max_age)
      AND (h.note IS NULL OR EXISTS (
            SELECT 1 FROM notes n WHERE n.lineage = h.note AND n.superseded_at IS NULL))
    ORDER BY h.updated_at DESC, h.id DESC
    LIMIT 1
$$;
