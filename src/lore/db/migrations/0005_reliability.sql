-- lore schema, version 5: reliability. What `lore purge` erased (ids and counts, never content), and
-- which note each section of an imported markdown file became, so that importing the same files
-- again updates those notes instead of adding copies.

CREATE TABLE purge_log (
    id        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    item      text        NOT NULL CHECK (item ~ '^[fnm]_[0-9]+$'),   -- the public id erased
    space     text        NOT NULL,
    erased    int         NOT NULL CHECK (erased >= 0),               -- rows erased with it (all tables)
    by_user   text        NOT NULL,                                   -- the OS user who ran lore purge
    at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE markdown_sections (
    space       text        NOT NULL CHECK (space ~ '^([A-Za-z0-9][A-Za-z0-9_.@-]{0,63}/)?[A-Za-z0-9_.-]{1,64}$'),
    file        text        NOT NULL,   -- relative to the workspace when inside it, else absolute
    section     text        NOT NULL,   -- the heading path, "#2" appended when a heading repeats
    lineage     bigint      NOT NULL,   -- the note it became: n_<lineage>
    sha256      text        NOT NULL,   -- of the section as last imported
    imported_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (space, file, section)
);
CREATE INDEX markdown_sections_note ON markdown_sections (lineage);
