"""PostgreSQL's ordered migrations: its text of schema.MIGRATIONS (the same tables, numbered
alike), then its own; stet_schema holds (version, pg_version). Where it differs from SQLite's:
every integer is a BIGINT (mtime_ns does not fit in 32 bits), lsns and effect ids come from the
store's sequences rather than AUTOINCREMENT, and text compares byte by byte (COLLATE "C", as
SQLite's BINARY) whatever the database's locale.

Never edit a released migration: append a new one (to schema.py too, for a shared table).
"""

MIGRATIONS: list[list[str]] = [
    # 1
    [
        """CREATE TABLE proposals (
            id TEXT COLLATE "C" PRIMARY KEY,
            task_id TEXT COLLATE "C",
            agent TEXT COLLATE "C",
            message TEXT COLLATE "C",
            edit_hash TEXT COLLATE "C" NOT NULL,
            result_hash TEXT COLLATE "C" NOT NULL,
            lsn BIGINT NOT NULL,
            created_at TEXT COLLATE "C" NOT NULL
        )""",
        """CREATE TABLE hunks (
            id TEXT COLLATE "C" PRIMARY KEY,
            proposal_id TEXT COLLATE "C" NOT NULL REFERENCES proposals(id),
            task_id TEXT COLLATE "C",
            seq BIGINT NOT NULL,
            uri TEXT COLLATE "C" NOT NULL,
            kind TEXT COLLATE "C" NOT NULL,
            new_uri TEXT COLLATE "C",
            status TEXT COLLATE "C" NOT NULL,
            line BIGINT NOT NULL,
            old_text TEXT COLLATE "C" NOT NULL,
            new_text TEXT COLLATE "C" NOT NULL,
            ctx_before TEXT COLLATE "C" NOT NULL,
            ctx_after TEXT COLLATE "C" NOT NULL,
            applied_text TEXT COLLATE "C",
            message TEXT COLLATE "C",
            feedback TEXT COLLATE "C",
            version BIGINT NOT NULL,
            decided_at TEXT COLLATE "C",
            lsn BIGINT NOT NULL
        )""",
        "CREATE INDEX hunks_by_uri ON hunks(uri)",
        "CREATE INDEX hunks_by_lsn ON hunks(lsn)",
        "CREATE INDEX hunks_by_proposal ON hunks(proposal_id)",
        """CREATE TABLE oplog (
            lsn BIGINT PRIMARY KEY,
            op_id TEXT COLLATE "C" NOT NULL UNIQUE,
            kind TEXT COLLATE "C" NOT NULL,
            args TEXT COLLATE "C" NOT NULL,
            result TEXT COLLATE "C",
            at TEXT COLLATE "C" NOT NULL
        )""",
        """CREATE TABLE effects (
            id BIGINT PRIMARY KEY,
            lsn BIGINT NOT NULL REFERENCES oplog(lsn),
            uri TEXT COLLATE "C" NOT NULL,
            action TEXT COLLATE "C" NOT NULL,
            edits TEXT COLLATE "C" NOT NULL,
            state TEXT COLLATE "C" NOT NULL,
            target TEXT COLLATE "C" NOT NULL DEFAULT 'file',
            attempts BIGINT NOT NULL DEFAULT 0,
            at TEXT COLLATE "C" NOT NULL
        )""",
        "CREATE INDEX effects_open ON effects(state, lsn)",
    ],
    # 2
    [
        """CREATE TABLE tasks (
            id TEXT COLLATE "C" PRIMARY KEY,
            title TEXT COLLATE "C" NOT NULL,
            goal TEXT COLLATE "C",
            agent TEXT COLLATE "C",
            status TEXT COLLATE "C" NOT NULL,
            summary TEXT COLLATE "C",
            created_at TEXT COLLATE "C" NOT NULL,
            updated_at TEXT COLLATE "C" NOT NULL,
            lsn BIGINT NOT NULL
        )""",
        """CREATE TABLE task_steps (
            task_id TEXT COLLATE "C" NOT NULL REFERENCES tasks(id),
            n BIGINT NOT NULL,
            text TEXT COLLATE "C" NOT NULL,
            status TEXT COLLATE "C" NOT NULL,
            updated_at TEXT COLLATE "C" NOT NULL,
            lsn BIGINT NOT NULL,
            PRIMARY KEY (task_id, n)
        )""",
        """CREATE TABLE task_notes (
            task_id TEXT COLLATE "C" NOT NULL REFERENCES tasks(id),
            n BIGINT NOT NULL,
            kind TEXT COLLATE "C" NOT NULL,
            text TEXT COLLATE "C" NOT NULL,
            why TEXT COLLATE "C",
            answers BIGINT,
            at TEXT COLLATE "C" NOT NULL,
            lsn BIGINT NOT NULL,
            PRIMARY KEY (task_id, n)
        )""",
        """CREATE TABLE task_files (
            task_id TEXT COLLATE "C" NOT NULL REFERENCES tasks(id),
            uri TEXT COLLATE "C" NOT NULL,
            hash TEXT COLLATE "C",
            read_at TEXT COLLATE "C" NOT NULL,
            lsn BIGINT NOT NULL,
            PRIMARY KEY (task_id, uri)
        )""",
        "CREATE INDEX hunks_by_task ON hunks(task_id)",
    ],
    # 3
    [
        'ALTER TABLE effects ADD COLUMN owner TEXT COLLATE "C"',
    ],
    # 4
    [
        "ALTER TABLE hunks ADD COLUMN in_file BIGINT",
        """CREATE TABLE file_stamps (
            uri TEXT COLLATE "C" PRIMARY KEY,
            size BIGINT NOT NULL,
            mtime_ns BIGINT NOT NULL,
            hash TEXT COLLATE "C"
        )""",
    ],
    # 5
    [
        'ALTER TABLE hunks ADD COLUMN problem TEXT COLLATE "C"',
        "UPDATE hunks SET message = NULL WHERE message IS NOT NULL AND message = "
        "(SELECT p.message FROM proposals p WHERE p.id = hunks.proposal_id)",
    ],
    # 6
    [
        "ALTER TABLE hunks ADD COLUMN kept BIGINT NOT NULL DEFAULT 0",
        """CREATE TABLE snapshot_sets (
            task_key TEXT COLLATE "C" PRIMARY KEY,
            whole BIGINT NOT NULL,
            consumed TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            lsn BIGINT NOT NULL,
            at TEXT COLLATE "C" NOT NULL
        )""",
        """CREATE TABLE snapshots (
            task_key TEXT COLLATE "C" NOT NULL REFERENCES snapshot_sets(task_key),
            uri TEXT COLLATE "C" NOT NULL,
            hash TEXT COLLATE "C",
            agent_hash TEXT COLLATE "C",
            lsn BIGINT NOT NULL,
            at TEXT COLLATE "C" NOT NULL,
            PRIMARY KEY (task_key, uri)
        )""",
        """CREATE TABLE captures (
            id TEXT COLLATE "C" PRIMARY KEY,
            lsn BIGINT NOT NULL,
            state TEXT COLLATE "C" NOT NULL,
            restores TEXT COLLATE "C" NOT NULL,
            cleanup TEXT COLLATE "C",
            outcome TEXT COLLATE "C",
            at TEXT COLLATE "C" NOT NULL
        )""",
        "CREATE INDEX captures_open ON captures(state)",
    ],
    # 7 (agent_told's key is made in POSTGRES_MIGRATIONS[1], with its checkout)
    [
        """CREATE TABLE turns (
            proposal_id TEXT COLLATE "C" PRIMARY KEY,
            session TEXT COLLATE "C" NOT NULL,
            number BIGINT NOT NULL
        )""",
        "CREATE UNIQUE INDEX turns_by_session ON turns(session, number)",
        """CREATE TABLE agent_told (
            agent TEXT COLLATE "C" NOT NULL,
            hunk_id TEXT COLLATE "C" NOT NULL,
            decision TEXT COLLATE "C" NOT NULL
        )""",
    ],
    # 8
    [
        'ALTER TABLE hunks ADD COLUMN parts TEXT COLLATE "C"',
    ],
    # 9 (the first root was stored relative from the start here; the others become so)
    [
        """CREATE TABLE roots (
            n BIGINT PRIMARY KEY,
            uri TEXT COLLATE "C" NOT NULL
        )""",
        "CREATE TABLE unplaced (n BIGINT NOT NULL)",
        "INSERT INTO unplaced (n) VALUES (0)",
    ],
    # 10
    [
        'ALTER TABLE hunks ADD COLUMN by_commit TEXT COLLATE "C"',
    ],
    # 11
    [
        'ALTER TABLE hunks ADD COLUMN sent_back TEXT COLLATE "C"',
    ],
]

# Then PostgreSQL's own, in order (their count is stet_schema.pg_version): what only a store
# shared by several checkouts needs. They touch only tables of the list above; never edit a
# released one either.
POSTGRES_MIGRATIONS: list[list[str]] = [
    # 1: lsns and effect ids from sequences (SQLite's AUTOINCREMENT keeps its own); the
    # repository and its checkouts; what is each checkout's own: its effects journal, its file
    # stamps and whether an applied hunk is in *its* files (hunk_in_file). The checkout of a
    # connection is the session setting stet.checkout (store/pgconn.py sets it).
    [
        "CREATE SEQUENCE stet_lsn",
        "CREATE SEQUENCE stet_effect_id",
        """CREATE TABLE stet_repository (
            id TEXT COLLATE "C",
            at TEXT NOT NULL
        )""",
        """CREATE TABLE stet_checkouts (
            id TEXT COLLATE "C" PRIMARY KEY,
            host TEXT COLLATE "C" NOT NULL,
            root TEXT COLLATE "C" NOT NULL,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL
        )""",
        "ALTER TABLE effects ADD COLUMN checkout TEXT COLLATE \"C\" NOT NULL DEFAULT current_setting('stet.checkout')",
        "CREATE INDEX effects_by_checkout ON effects(checkout, state, lsn)",
        'ALTER TABLE file_stamps ADD COLUMN checkout TEXT COLLATE "C" NOT NULL '
        "DEFAULT current_setting('stet.checkout')",
        "ALTER TABLE file_stamps DROP CONSTRAINT file_stamps_pkey",
        "ALTER TABLE file_stamps ADD PRIMARY KEY (checkout, uri)",
        """CREATE TABLE hunk_in_file (
            checkout TEXT COLLATE "C" NOT NULL,
            hunk_id TEXT COLLATE "C" NOT NULL,
            in_file BIGINT,
            PRIMARY KEY (checkout, hunk_id)
        )""",
    ],
    # 2: what an agent was told is each checkout's own (each checkout runs its own agent).
    [
        'ALTER TABLE agent_told ADD COLUMN checkout TEXT COLLATE "C" NOT NULL '
        "DEFAULT current_setting('stet.checkout')",
        "ALTER TABLE agent_told ADD PRIMARY KEY (checkout, agent, hunk_id)",
    ],
]
