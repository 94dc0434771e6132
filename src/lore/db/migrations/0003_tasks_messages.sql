-- lore schema, version 3: tasks (a status beside a note of kind `task`) and messages between spaces.
--
-- A task IS a note (kind = 'task', public id n_<lineage>); `tasks` holds its workflow state, which
-- changes in place, and `task_events` the history of every change (who, from where, when, why).
-- Messages are never embedded and never linked; reading marks them read exactly once.
-- Both notify listeners on versioned channels: lore_messages_v1, lore_tasks_v1. A payload carries
-- ids only (NOTIFY payloads are capped at 8,000 bytes); listeners fetch the rows.

CREATE TABLE tasks (
    lineage        bigint      PRIMARY KEY,          -- the task note's lineage: n_<lineage>
    space          text        NOT NULL CHECK (space ~ '^[A-Za-z0-9_.-]{1,64}$'),
    status         text        NOT NULL CHECK (status IN ('inbox', 'todo', 'doing', 'blocked', 'done')),
    from_space     text        NOT NULL CHECK (from_space ~ '^[A-Za-z0-9_.-]{1,64}$'),
    from_source    text        NOT NULL,
    from_workspace text,
    filed_at       timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tasks_by_space ON tasks (space, status, lineage);

CREATE FUNCTION tasks_note_matches() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM notes WHERE lineage = NEW.lineage AND space = NEW.space AND kind = 'task') THEN
        RAISE EXCEPTION 'task % must be a note of kind task in space %', NEW.lineage, NEW.space
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER tasks_note_matches BEFORE INSERT OR UPDATE OF lineage, space ON tasks
    FOR EACH ROW EXECUTE FUNCTION tasks_note_matches();

CREATE TABLE task_events (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    lineage    bigint      NOT NULL REFERENCES tasks (lineage) ON DELETE CASCADE,
    status     text        NOT NULL CHECK (status IN ('inbox', 'todo', 'doing', 'blocked', 'done')),
    note       text        CHECK (note IS NULL OR length(note) BETWEEN 1 AND 1000),
    space      text        NOT NULL,                 -- the space of the session that acted
    source     text        NOT NULL,
    workspace  text,
    at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX task_events_by_task ON task_events (lineage, id);

-- A task arriving in an inbox wakes that space's listeners.
CREATE FUNCTION tasks_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('lore_tasks_v1', json_build_object(
        'id', NEW.lineage, 'space', NEW.space, 'from_space', NEW.from_space, 'status', NEW.status)::text);
    RETURN NULL;
END $$;
CREATE TRIGGER tasks_notify AFTER INSERT OR UPDATE OF status ON tasks
    FOR EACH ROW WHEN (NEW.status = 'inbox') EXECUTE FUNCTION tasks_notify();

CREATE TABLE messages (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,   -- public id m_<id>
    to_space       text        NOT NULL CHECK (to_space ~ '^[A-Za-z0-9_.-]{1,64}$'),
    from_space     text        NOT NULL CHECK (from_space ~ '^[A-Za-z0-9_.-]{1,64}$'),
    body           text        NOT NULL CHECK (length(body) BETWEEN 1 AND 4000),
    reply_to       bigint      REFERENCES messages (id),
    thread         bigint      NOT NULL,             -- the first message of the thread (set below)
    source         text        NOT NULL,             -- the sending client
    workspace      text,                             -- the sender's workspace
    from_session   text,                             -- the sending session (a session never reads its own)
    sent_at        timestamptz NOT NULL DEFAULT now(),
    read_at        timestamptz,
    read_by        text,
    CHECK ((read_at IS NULL) = (read_by IS NULL))
);
CREATE INDEX messages_unread ON messages (to_space, id) WHERE read_at IS NULL;
CREATE INDEX messages_replies ON messages (reply_to) WHERE reply_to IS NOT NULL;
CREATE INDEX messages_by_thread ON messages (thread, id);
CREATE INDEX messages_by_space ON messages (to_space, id);

CREATE FUNCTION messages_thread() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.thread := coalesce((SELECT thread FROM messages WHERE id = NEW.reply_to), NEW.id);
    RETURN NEW;
END $$;
CREATE TRIGGER messages_thread BEFORE INSERT ON messages
    FOR EACH ROW EXECUTE FUNCTION messages_thread();

CREATE FUNCTION messages_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('lore_messages_v1', json_build_object(
        'id', NEW.id, 'to_space', NEW.to_space, 'from_space', NEW.from_space,
        'reply_to', NEW.reply_to)::text);
    RETURN NULL;
END $$;
CREATE TRIGGER messages_notify AFTER INSERT ON messages
    FOR EACH ROW EXECUTE FUNCTION messages_notify();
