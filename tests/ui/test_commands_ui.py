"""Administration › Commands in the browser: an administrator reads a command's help, runs
`ping_mngmt_commands_http` and follows its job to the end, stops a long one, sees a bad argument
fail with the parser's message and the API's refusals next to the form; the arguments are split
as a shell would; members do not get the controls."""

from __future__ import annotations

import json

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, make_user

PING = "ping_mngmt_commands_http"


def shot(tab, label: str) -> None:
    """A screenshot without the toast of the last action over it."""
    tab.page.evaluate("document.getElementById('toast').className = ''")
    tab.page.wait_for_timeout(250)  # its fading
    tab.shot(label)


def run(tab, args: str) -> int:
    """Runs ping with these arguments; the id of the job it made (selected in the detail)."""
    page = tab.page
    form = page.locator(f"li.command[data-command='{PING}'] form")
    before = page.evaluate("location.hash")
    form.locator("input[name=args]").fill(args)
    form.locator("button[type=submit]").click()
    tab.until(f"location.hash !== {json.dumps(before)} && location.hash.includes('job=')")
    job = int(page.evaluate("location.hash").split("job=")[1])
    page.wait_for_selector(f".job-detail h2:has-text('Job {job}')")
    page.wait_for_selector(f"tr[data-job='{job}']")
    return job


def test_admin_runs_ping_and_follows_its_job(tab, ui_admin):
    page = tab.page
    tab.sign_in("admin", ADMIN_PASSWORD)
    tab.go("/admin/commands", wait=f"li.command[data-command='{PING}']")
    assert page.locator(".tabs a[aria-current=page]").inner_text() == "Commands"
    listed = ui_admin.get("/api/v2/management/commands/").json()["data"]
    assert sorted(page.eval_on_selector_all("li.command", "(els) => els.map((e) => e.dataset.command)")) == sorted(listed)

    # the help is folded until asked for
    item = page.locator(f"li.command[data-command='{PING}']")
    assert not item.locator(".help-text").is_visible()
    item.locator("details.help summary").click()
    assert "--sleep" in item.locator(".help-text").inner_text()
    assert "Answers pong" in item.locator(".about").inner_text()

    # the arguments as they will be sent
    item.locator("input[name=args]").fill("--sleep 0.5")
    assert item.locator(".args-preview code").all_inner_texts() == ["--sleep", "0.5"]

    job = run(tab, "--sleep 0.5")
    detail = page.locator(".job-detail")
    page.wait_for_selector(".job-detail .badge.job-status:text-is('finished')", timeout=20_000)
    page.wait_for_selector(".job-detail .job-output:has-text('pong')")
    row = page.locator(f"tr[data-job='{job}']")
    row.locator(".badge:text-is('finished')").wait_for()
    assert row.locator("td[data-label=Failed]").inner_text() == "No"
    assert row.locator("td[data-label=By]").inner_text() == "admin"
    assert row.locator("td[data-label=Arguments]").inner_text() == "--sleep 0.5"
    assert row.locator("td[data-label=Took]").inner_text().endswith(" s")
    assert "--sleep 0.5" in detail.locator(".job-meta").inner_text()
    saved = ui_admin.get(f"/api/v2/management/jobs/{job}/").json()
    assert saved["args"] == ["--sleep", "0.5"] and saved["kwargs"] == {} and saved["status"] == "FINISHED"
    shot(tab, "commands-tab")

    # the narrow screen: nothing wider than the phone
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(200)
    assert page.evaluate("document.documentElement.scrollWidth") <= 391
    shot(tab, "commands-phone")
    page.set_viewport_size({"width": 1280, "height": 800})

    # a long one, stopped: its output says so
    job = run(tab, "--sleep 30")
    page.wait_for_selector(f"tr[data-job='{job}'] .badge:text-is('started') .spinner", timeout=20_000)
    stop = page.locator(".job-detail button:has-text('Stop')")
    stop.click()
    page.wait_for_selector(".job-detail .badge.job-status:text-is('finished')", timeout=20_000)
    assert "Stopped." in page.locator(".job-detail .job-output").inner_text()
    assert page.locator(".job-detail button:has-text('Stop')").count() == 0
    # the keyboard's place went to the output (the Stop button is gone)
    assert page.evaluate("document.activeElement.classList.contains('job-output')")
    assert ui_admin.get(f"/api/v2/management/jobs/{job}/").json()["status"] == "FINISHED"

    # a bad argument: the job fails with the parser's message
    job = run(tab, "--nope")
    page.wait_for_selector(".job-detail .badge.status-failed:text-is('finished')", timeout=20_000)
    assert "unrecognized arguments: --nope" in page.locator(".job-detail .job-output").inner_text()
    page.wait_for_selector(f"tr[data-job='{job}'] td[data-label=Failed] .error:text-is('Yes')")
    shot(tab, "commands-failed")

    # the API's refusal is shown next to the form, and a quote left open is not sent at all
    form = page.locator(f"li.command[data-command='{PING}'] form")
    count = ui_admin.get("/api/v2/management/jobs/").json()["total"]
    form.locator("input[name=args]").fill("--help")
    form.locator("button[type=submit]").click()
    page.wait_for_selector(f"li.command[data-command='{PING}'] [role=alert]:has-text('Forbidden argument')")
    tab.allow("status of 400")
    form.locator("input[name=args]").fill("--sleep '1")
    assert "not closed" in form.locator(".args-preview").inner_text()
    form.locator("button[type=submit]").click()
    page.wait_for_selector(f"li.command[data-command='{PING}'] [role=alert]:has-text('Nothing was sent')")
    assert ui_admin.get("/api/v2/management/jobs/").json()["total"] == count


def test_a_job_is_opened_from_the_list_and_started(tab, ui_admin):
    r = ui_admin.post(f"/api/v2/management/commands/{PING}/", json={"args": ["--sleep", "0"], "autostart": False})
    assert r.status_code == 201, r.text
    job = r.json()["data"]["id"]
    tab.sign_in("admin", ADMIN_PASSWORD)
    page = tab.go("/admin/commands", wait=f"tr[data-job='{job}']")
    assert page.locator(f"tr[data-job='{job}'] .badge").inner_text().lower() == "created"
    # by the keyboard: the job's link opens its detail, where Start runs it
    page.focus(f"tr[data-job='{job}'] a")
    page.keyboard.press("Enter")
    page.wait_for_selector(f".job-detail h2:has-text('Job {job}')")
    assert page.evaluate("location.hash").endswith(f"job={job}")
    tab.until("document.activeElement && document.activeElement.id === 'job-title'")  # focus follows the opening
    page.wait_for_selector(".job-detail :text('No output yet.')")
    page.click(".job-detail button:has-text('Start')")
    page.wait_for_selector(".job-detail .job-output:has-text('pong')", timeout=20_000)
    assert ui_admin.get(f"/api/v2/management/jobs/{job}/").json()["status"] == "FINISHED"
    # the address holds the job: opened anew, the page shows it
    page.reload()
    page.wait_for_selector(f".job-detail h2:has-text('Job {job}')")
    page.wait_for_selector(f"tr[data-job='{job}'][aria-current=true]")


def test_arguments_are_split_as_a_shell_would(tab):
    tab.sign_in("admin", ADMIN_PASSWORD)
    page = tab.go("/admin/commands", wait="li.command")
    cases = {
        "": [],
        "   ": [],
        "--sleep 0.5": ["--sleep", "0.5"],
        "  a   b  ": ["a", "b"],
        "--title 'Rivers of Europe'": ["--title", "Rivers of Europe"],
        '--title "Rivers of Europe"': ["--title", "Rivers of Europe"],
        '--name="two words" x': ["--name=two words", "x"],
        "''": [""],
        '"" x': ["", "x"],
        "it\\'s": ["it's"],
        "a\\ b": ["a b"],
        '"say \\"hi\\" \\\\ \\n"': ['say "hi" \\ \\n'],
        "'no \\escapes \"here\"'": ['no \\escapes "here"'],
        "mixed'single'\"double\"": ["mixedsingledouble"],
        "tab\there": ["tab", "here"],
    }
    got = page.evaluate("""async (cases) => {
      const { splitArgs } = await import('/ui/js/pages/commands.js');
      const out = {};
      for (const line of cases) out[line] = splitArgs(line);
      return out;
    }""", list(cases))
    assert got == cases, json.dumps(got, indent=1)
    errors = page.evaluate("""async () => {
      const { splitArgs } = await import('/ui/js/pages/commands.js');
      return ["'open", '"open', 'trailing\\\\'].map((line) => { try { splitArgs(line); return null; } catch (e) { return e.message; } });
    }""")
    assert all(errors), errors


def test_members_do_not_get_the_controls(tab, ui_admin):
    staff = make_user(ui_admin)
    assert ui_admin.patch(f"/api/v2/users/{staff['pk']}", json={"is_staff": True}).status_code == 200
    member = make_user(ui_admin)
    tab.sign_in(member["username"], USER_PASSWORD)
    page = tab.go("/admin/commands", wait="h1:text('Administration')")
    assert "Only staff may administer this catalogue." in page.inner_text("main")
    assert page.locator("li.command, form.command-form, .tabs").count() == 0
    tab.sign_out()
    tab.sign_in(staff["username"], USER_PASSWORD)  # staff, not superuser: the commands are theirs
    tab.go("/admin/commands", wait=f"li.command[data-command='{PING}'] form")
    shot(tab, "commands-staff")


def fake_job(job_id: int, status: str, output: str) -> dict:
    return {"id": job_id, "command": "importlayers", "app_name": "catalogue", "user": 1, "status": status,
            "created_at": "2025-01-02T10:00:00Z", "start_time": "2025-01-02T10:00:01Z",
            "end_time": "2025-01-02T10:05:00Z" if status == "FINISHED" else None,
            "args": ["/data/rivers dir", "--overwrite"], "kwargs": {"user": "admin"}, "celery_result_id": None,
            "output_message": output, "failed": False}


def test_the_output_follows_its_end_unless_scrolled_up(tab):
    """A long job (its answers made up in the browser): its output grows, the view stays at its
    end; scrolled up by the reader, it stays where they are."""
    calls = {"n": 0}

    def answer(route):
        calls["n"] += 1
        lines = "".join(f"imported layer {i}\n" for i in range(calls["n"] * 40))
        status = "STARTED" if calls["n"] < 7 else "FINISHED"
        route.fulfill(status=200, content_type="application/json", body=json.dumps(fake_job(999, status, lines)))

    tab.sign_in("admin", ADMIN_PASSWORD)
    tab.page.route("**/api/v2/management/jobs/999/", answer)
    page = tab.go("/admin/commands?job=999", wait=".job-detail .job-output")
    at_end = "(() => { const o = document.querySelector('.job-output'); return o.scrollHeight - o.scrollTop - o.clientHeight < 8; })()"
    tab.until("document.querySelector('.job-output').textContent.includes('imported layer 100')")
    assert page.evaluate(at_end)
    assert "'/data/rivers dir' --overwrite --user admin" in page.locator(".job-detail .job-meta").inner_text()
    assert page.locator(".job-detail button:has-text('Stop')").count() == 1
    page.evaluate("document.querySelector('.job-output').scrollTop = 0")
    seen = calls["n"]
    tab.until(f"document.querySelector('.job-output').textContent.includes('imported layer {(seen + 1) * 40 - 1}')")
    assert page.evaluate("document.querySelector('.job-output').scrollTop") == 0
    page.wait_for_selector(".job-detail .badge:text-is('finished')", timeout=20_000)
    assert page.locator(".job-detail button:has-text('Stop')").count() == 0


def test_every_command_is_offered_with_the_shortcuts(tab):
    """Every command the API lists gets its help and form; the shortcuts run the operator's usual
    tasks (repair asks first); a shortcut's job shows its output."""
    page = tab.page
    tab.sign_in("admin", ADMIN_PASSWORD)
    listed = page.evaluate("fetch('/api/v2/management/commands/').then(r => r.json())")["data"]
    assert {"importlayers", "backup", "check", "repair", "vacuum"} <= set(listed)
    tab.go("/admin/commands", wait="li.command[data-command='importlayers'] form")
    assert page.locator("li.command").count() == len(listed)
    assert "Import geodata files" in page.inner_text("li.command[data-command='importlayers'] .about")
    assert page.locator(".shortcuts button").all_inner_texts() == ["Back up now", "Check", "Repair", "Vacuum"]
    shot(tab, "commands-many")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(200)
    assert page.evaluate("document.documentElement.scrollWidth") <= 391
    shot(tab, "commands-many-phone")
    page.set_viewport_size({"width": 1280, "height": 800})
    # repair asks first; cancelled, nothing is sent
    before = page.evaluate("fetch('/api/v2/management/jobs/?command=repair').then(r => r.json())")["total"]
    page.click(".shortcuts button:text-is('Repair')")
    page.wait_for_selector("dialog.confirm[open]")
    page.click("dialog.confirm button:text('Cancel')")
    assert page.evaluate("fetch('/api/v2/management/jobs/?command=repair').then(r => r.json())")["total"] == before
    # check runs, and its job ends with its report
    page.click(".shortcuts button:text-is('Check')")
    page.wait_for_selector(".job-detail:has-text('FINISHED')", timeout=30_000)
    shot(tab, "commands-check")
