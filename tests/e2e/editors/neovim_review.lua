-- A whole review in real Neovim (0.7+), headless, with nothing but its built-in LSP client.
-- Environment: STET_PYTHON, STET_ROOT, STET_FILE, STET_OUT (a result file this script writes).
local python, root, file, out = os.getenv("STET_PYTHON"), os.getenv("STET_ROOT"), os.getenv("STET_FILE"), os.getenv("STET_OUT")
local log = {}
local function note(s) table.insert(log, s) end
local function finish(ok)
  local f = io.open(out, "w")
  f:write((ok and "ok" or "failed") .. "\n" .. table.concat(log, "\n") .. "\n")
  f:close()
  vim.cmd(ok and "qall!" or "cquit")
end

local restored = false
local client_id = vim.lsp.start_client({
  cmd = { python, "-m", "stet", "serve" },
  root_dir = root,
  handlers = { ["stet/restored"] = function() restored = true end,
               ["stet/hunksChanged"] = function() end },
})
vim.cmd("edit " .. file)
local buf = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buf, client_id)
if not vim.wait(60000, function() return restored end, 50) then note("no stet/restored"); return finish(false) end
local client = vim.lsp.get_client_by_id(client_id)

-- The agent's proposal (any LSP client can send it): change line 2 and line 5.
local uri = vim.uri_from_bufnr(buf)
local answer
client.request("stet/propose", {
  proposalId = "nvim-1",
  edit = { changes = { [uri] = {
    { range = { start = { line = 1, character = 0 }, ["end"] = { line = 2, character = 0 } }, newText = "TWO\n" },
    { range = { start = { line = 4, character = 0 }, ["end"] = { line = 5, character = 0 } }, newText = "FIVE\n" },
  } } },
}, function(err, result) answer = err or result end, buf)
if not vim.wait(60000, function() return answer ~= nil end, 50) then note("no answer to stet/propose"); return finish(false) end
note("proposed " .. #(answer.hunks or {}) .. " hunks")

-- Code lenses come from the server; accept the first hunk through its lens' command.
vim.lsp.codelens.refresh()
local accept
vim.wait(60000, function()
  for _, lens in ipairs(vim.lsp.codelens.get(buf) or {}) do
    if lens.command and lens.command.command == "stet.accept" and lens.range.start.line == 1 then accept = lens end
  end
  return accept ~= nil
end, 50)
if not accept then note("no Accept lens on line 2"); return finish(false) end
note("lens: " .. accept.command.title)
local done
client.request("workspace/executeCommand", accept.command, function(err, result) done = err or result end, buf)
if not vim.wait(60000, function() return done ~= nil end, 50) then note("accept did not answer"); return finish(false) end
note("accept answered: " .. ((done.hunks and done.hunks[1].status) or vim.inspect(done)))

-- Reject the second through a code action at its line.
local actions
vim.lsp.buf_request(buf, "textDocument/codeAction", {
  textDocument = { uri = uri },
  range = { start = { line = 4, character = 0 }, ["end"] = { line = 4, character = 0 } },
  context = { diagnostics = {} },
}, function(err, result) actions = result or {} end)
vim.wait(60000, function() return actions ~= nil end, 50)
local reject
for _, a in ipairs(actions or {}) do
  local cmd = a.command or a
  if type(cmd) == "table" and cmd.command == "stet.reject" then reject = cmd end
end
if not reject then note("no reject action"); return finish(false) end
local rejected
client.request("workspace/executeCommand", reject, function(err, result) rejected = err or result end, buf)
vim.wait(60000, function() return rejected ~= nil end, 50)
note("reject answered: " .. ((rejected.hunks and rejected.hunks[1].status) or vim.inspect(rejected)))

vim.wait(500, function() return false end, 50)  -- let Neovim's own didChange reach the server
vim.cmd("write")
note("line 2 in the buffer: " .. vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1])
finish(true)
