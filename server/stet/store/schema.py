"""SQLite's ordered migrations; the schema version is PRAGMA user_version. PostgreSQL's text
of the same migrations, and its own, are in pg_schema.py: a new migration is written in both.

Never edit a released migration: append a new one.
"""

MIGRATIONS: list[list[str]] = [
    # 1: proposals, hunks, the operation log, the effects journal.
    [
        """CREATE TABLE proposals (
            id TEXT PRIMARY KEY,
            task_id TEXT,
            agent TEXT,
            message TEXT,
            edit_hash TEXT NOT NULL,
            result_hash TEXT NOT NULL,
            lsn INTEGER NOT NULL,
            created_at TEXT NOT NULL
        )""",
        """CREATE TABLE hunks (
            id TEXT PRIMARY KEY,
            proposal_id TEXT NOT NULL REFERENCES proposals(id),
            task_id TEXT,
            seq INTEGER NOT NULL,
            uri TEXT NOT NULL,
            kind TEXT NOT NULL,
            new_uri TEXT,
            status TEXT NOT NULL,
            line INTEGER NOT NULL,
            old_text TEXT NOT NULL,
            new_text TEXT NOT NULL,
            ctx_before TEXT NOT NULL,
            ctx_after TEXT NOT NULL,
            applied_text TEXT,
            message TEXT,
            feedback TEXT,
            version INTEGER NOT NULL,
            decided_at TEXT,
            lsn INTEGER NOT NULL
        )""",
        "CREATE INDEX hunks_by_uri ON hunks(uri)",
        "CREATE INDEX hunks_by_lsn ON hunks(lsn)",
        "CREATE INDEX hunks_by_proposal ON hunks(proposal_id)",
        """CREATE TABLE oplog (
            lsn INTEGER PRIMARY KEY AUTOINCREMENT,
            op_id TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            args TEXT NOT NULL,
            result TEXT,
            at TEXT NOT NULL
        )""",
        """CREATE TABLE effects (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            lsn INTEGER NOT NULL REFERENCES oplog(lsn),
            uri TEXT NOT NULL,
            action TEXT NOT NULL,
            edits TEXT NOT NULL,
            state TEXT NOT NULL,
            target TEXT NOT NULL DEFAULT 'file',
            attempts INTEGER NOT NULL DEFAULT 0,
            at TEXT NOT NULL
        )""",
        "CREATE INDEX effects_open ON effects(state, lsn)",
    ],
    # 2: tasks: the agent's unit of work, so a new worker can carry on where another stopped.
    # Hunks already carry task_id (no foreign key: a proposal may name a task never started).
    [
        """CREATE TABLE tasks (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            goal TEXT,
            agent TEXT,
            status TEXT NOT NULL,
            summary TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            lsn INTEGER NOT NULL
        )""",
        """CREATE TABLE task_steps (
            task_id TEXT NOT NULL REFERENCES tasks(id),
            n INTEGER NOT NULL,
            text TEXT NOT NULL,
            status TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            lsn INTEGER NOT NULL,
            PRIMARY KEY (task_id, n)
        )""",
        """CREATE TABLE task_notes (
            task_id TEXT NOT NULL REFERENCES tasks(id),
            n INTEGER NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            why TEXT,
            answers INTEGER,
            at TEXT NOT NULL,
            lsn INTEGER NOT NULL,
            PRIMARY KEY (task_id, n)
        )""",
        """CREATE TABLE task_files (
            task_id TEXT NOT NULL REFERENCES tasks(id),
            uri TEXT NOT NULL,
            hash TEXT,
            read_at TEXT NOT NULL,
            lsn INTEGER NOT NULL,
            PRIMARY KEY (task_id, uri)
        )""",
        "CREATE INDEX hunks_by_task ON hunks(task_id)",
    ],
    # 3: which process holds an edit that lives in an editor's buffer (one server per window).
    [
        "ALTER TABLE effects ADD COLUMN owner TEXT",
    ],
    # 4: the truth about files every process can check cheaply: whether an applied hunk's text
    # is still in its file (derived), and what each file was (size, mtime, hash) when Stet last
    # looked, so a process re-reads only the files that changed since.
    [
        "ALTER TABLE hunks ADD COLUMN in_file INTEGER",
        """CREATE TABLE file_stamps (
            uri TEXT PRIMARY KEY,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            hash TEXT
        )""",
    ],
    # 5: why a hunk's decision could not be carried out (shown to the developer, explained by doctor);
    # a proposal's message stored once (in proposals), not once per hunk.
    [
        "ALTER TABLE hunks ADD COLUMN problem TEXT",
        # A proposal's message is stored once, in proposals: drop the copies hunks carried.
        "UPDATE hunks SET message = NULL WHERE message IS NOT NULL AND message = "
        "(SELECT p.message FROM proposals p WHERE p.id = hunks.proposal_id)",
    ],
    # 6: capture. A hunk may be `kept`: the agent wrote its new text into the file itself and
    # it was left there for review. Snapshots record files before an agent touches them (the
    # content lives in .stet/snapshots/, by hash). A capture's restore journal: which files
    # get their baseline back, finished by any process that opens the store.
    [
        "ALTER TABLE hunks ADD COLUMN kept INTEGER NOT NULL DEFAULT 0",
        """CREATE TABLE snapshot_sets (
            task_key TEXT PRIMARY KEY,
            whole INTEGER NOT NULL,
            consumed TEXT NOT NULL DEFAULT '[]',
            lsn INTEGER NOT NULL,
            at TEXT NOT NULL
        )""",
        """CREATE TABLE snapshots (
            task_key TEXT NOT NULL REFERENCES snapshot_sets(task_key),
            uri TEXT NOT NULL,
            hash TEXT,
            agent_hash TEXT,
            lsn INTEGER NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (task_key, uri)
        )""",
        """CREATE TABLE captures (
            id TEXT PRIMARY KEY,
            lsn INTEGER NOT NULL,
            state TEXT NOT NULL,
            restores TEXT NOT NULL,
            cleanup TEXT,
            outcome TEXT,
            at TEXT NOT NULL
        )""",
        "CREATE INDEX captures_open ON captures(state)",
    ],
    # 7: the agent's loop. `turns`: the Claude Code session and turn (numbered from 1 per
    # session) a hook's capture was made in, one row per captured proposal. `agent_told`: the
    # last decision of each hunk an agent was told (`decision`: its kind and when it was made),
    # so each decision is told once (agents/loop.py).
    [
        """CREATE TABLE turns (
            proposal_id TEXT PRIMARY KEY,
            session TEXT NOT NULL,
            number INTEGER NOT NULL
        )""",
        "CREATE UNIQUE INDEX turns_by_session ON turns(session, number)",
        """CREATE TABLE agent_told (
            agent TEXT NOT NULL,
            hunk_id TEXT NOT NULL,
            decision TEXT NOT NULL,
            PRIMARY KEY (agent, hunk_id)
        )""",
    ],
    # 8: a hunk split into a part decided and the rest (docs/protocol.md, "Parts of a hunk"):
    # the ids of its two parts, a JSON list.
    [
        "ALTER TABLE hunks ADD COLUMN parts TEXT",
    ],
    # 9: paths relative to the workspace's roots (roots.py). `roots`: where the store last saw
    # each root (the others' paths are read there by a process opened without them); `unplaced`:
    # how many stored values still hold an absolute uri that no root fitted. After these
    # statements, in the same transaction, every stored path is made relative (relocation.py).
    [
        """CREATE TABLE roots (
            n INTEGER PRIMARY KEY,
            uri TEXT NOT NULL
        )""",
        "CREATE TABLE unplaced (n INTEGER NOT NULL)",
        "INSERT INTO unplaced (n) VALUES (0)",
    ],
    # 10: a kept hunk accepted by a commit (domain/commit_keep.py): the commit's id; NULL for a
    # hunk the developer decided.
    [
        "ALTER TABLE hunks ADD COLUMN by_commit TEXT",
    ],
    # 11: a rejection sent back to the agent (request changes, agents/turn.py): the decision
    # sent, as Hunk.decision says it (it stands while it is the hunk's decision); NULL otherwise.
    [
        "ALTER TABLE hunks ADD COLUMN sent_back TEXT",
    ],
]

SCHEMA_VERSION = len(MIGRATIONS)
PATHS_RELATIVE = 9  # the version whose migration makes the stored paths relative
