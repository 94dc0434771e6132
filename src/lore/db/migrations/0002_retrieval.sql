-- lore schema, version 2: retrieval. HNSW indexes per embedding model, irrelevance feedback,
-- reverse edge lookups, and a small index the embedding worker polls.
--
-- notes.embedding has no fixed dimension (models differ); an HNSW index needs one, so each model
-- gets a partial expression index on `embedding::vector(DIM)` restricted to its own rows. Queries
-- repeat the same expression and predicate (lore.search). Other models (an OpenAI-compatible
-- endpoint) get theirs created on first use by the embedding worker.

CREATE INDEX notes_hnsw_minilm ON notes USING hnsw ((embedding::vector(384)) vector_cosine_ops)
    WHERE embedding_model = 'all-MiniLM-L6-v2-int8' AND superseded_at IS NULL;
CREATE INDEX notes_hnsw_potion ON notes USING hnsw ((embedding::vector(256)) vector_cosine_ops)
    WHERE embedding_model = 'potion-base-8M' AND superseded_at IS NULL;

-- What the embedding worker still has to do (current rows without a vector).
CREATE INDEX notes_unembedded ON notes (version_id) WHERE embedding IS NULL AND superseded_at IS NULL;

-- Expansion follows edges both ways.
CREATE INDEX edges_to ON edges (to_note);

-- mark_irrelevant: "this note does not answer this query", said from a session of `space`.
-- Later searches from that space whose query is close to `query` (by embedding, else by its
-- lexemes) drop the note. The note itself is untouched: other queries still find it.
CREATE TABLE irrelevant (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    space           text        NOT NULL CHECK (space ~ '^[A-Za-z0-9_.-]{1,64}$'),
    note            bigint      NOT NULL,
    query           text        NOT NULL CHECK (length(query) BETWEEN 1 AND 1000),
    lexemes         text[]      NOT NULL,
    embedding       vector,
    embedding_model text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    source          text        NOT NULL,
    workspace       text,
    CHECK ((embedding IS NULL) = (embedding_model IS NULL))
);
CREATE INDEX irrelevant_by_space ON irrelevant (space, note);
