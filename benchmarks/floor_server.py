"""The floor for the accept round trip: a language server on the same stack as Stet (pygls 2
over stdio, same interpreter) that does nothing but the protocol.

- `floor.noop`: an executeCommand that returns at once.
- `floor.apply`: an executeCommand that sends one `workspace/applyEdit` (a versioned
  TextDocumentEdit replacing one line of an open document) and answers once the client
  has answered it. The client reports the edit with didChange before its answer, so the
  floor includes reading that didChange too (pygls' own document sync handles it).

Run only by the benchmarks: `python benchmarks/floor_server.py`.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("stet-bench-floor", "0")


@server.command("floor.noop")
async def noop(ls: LanguageServer, *args):
    return {}


@server.command("floor.apply")
async def apply(ls: LanguageServer, params: dict):
    uri, line, text = params["uri"], params["line"], params["text"]
    doc = ls.workspace.get_text_document(uri)
    edit = types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                [types.TextEdit(types.Range(types.Position(line, 0), types.Position(line + 1, 0)), text)],
            )
        ]
    )
    result = await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label="floor"))
    return {"applied": bool(result and result.applied)}


if __name__ == "__main__":
    server.start_io()
