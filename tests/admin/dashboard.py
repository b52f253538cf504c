#!/usr/bin/env python3
"""The dashboard in a real browser (headless Chromium through Selenium):
a run submitted while the page is open shows up and completes without a
reload; a failed run is opened, its DAG and Gantt show the failure, its
attempt's detail shows the exit status and the log tail; retry with a
wrong token shows the API's refusal, retry with the right one runs it
again and the page sees it complete.  A screenshot is saved.

Prints one line per check: "PASS\tNAME" or "FAIL\tNAME", and "# ..." lines;
tests/admin/dashboard.sh turns them into TAP.

usage: dashboard.py BASE TOKEN_FILE FLAG_FILE SCREENSHOT
       dashboard.py --events BASE TOKEN_FILE SCREENSHOT
       dashboard.py --remote BASE TOKEN_FILE
       dashboard.py --roles BASE READ_TOKEN_FILE OPERATE_TOKEN_FILE
With --remote, BASE is a listener other machines reach, where reads need
the token too: the page asks for it once and then shows the runs.
With --events, the events view open while two events are posted shows
them live, one having fired the trigger of `landed` (its run linked),
the other passed over with why; the triggers view shows that trigger's
last firing, its part and the event passed over; a run of `conv` whose
task came from the cache has it marked "(cached)" in the DAG, the Gantt
and the detail.  Screenshots of the events view (SCREENSHOT) and of the
triggers view ("events" in its name made "triggers") are saved.
With --roles, the page with a read token kept shows no action button and
names the token's role; with an operate token it shows cancel, which
works.
"""
import json
import os
import sys
import tempfile
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import (NoSuchElementException,
                                        StaleElementReferenceException, TimeoutException,
                                        WebDriverException)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

remote = sys.argv[1] == "--remote"
roles = sys.argv[1] == "--roles"
events = sys.argv[1] == "--events"
if events:
    base, token_file, shot = sys.argv[2:5]
    flag = None
elif remote:
    base, token_file = sys.argv[2:4]
    flag = shot = None
elif roles:
    base, read_file, token_file = sys.argv[2:5]
    read_token = open(read_file).read().strip()
    flag = shot = None
else:
    base, token_file, flag, shot = sys.argv[1:5]
token = open(token_file).read().strip()
failed = 0


def check(cond, name, why=""):
    global failed
    print(("PASS" if cond else "FAIL") + "\t" + name, flush=True)
    if not cond:
        failed += 1
        if why:
            print("# " + why.replace("\n", "\n# "), flush=True)


def post(path, body):
    req = urllib.request.Request(
        base + path, data=json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def submit(workflow, context=None):
    body = {"workflow": workflow}
    if context is not None:
        body["context"] = context
    return post("/api/v1/runs", body)["run_id"]


def get(path):
    req = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def find_binary(*names):
    for n in names:
        for d in os.environ.get("PATH", "").split(":") + ["/usr/bin", "/usr/lib/chromium"]:
            p = os.path.join(d, n)
            if os.access(p, os.X_OK):
                return p
    return None


profile = tempfile.mkdtemp(prefix="sy-chromium-")
opts = webdriver.ChromeOptions()
opts.binary_location = find_binary("chromium", "chromium-browser")
for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
          "--no-first-run", "--disable-background-networking", "--disable-component-update",
          "--disable-sync", "--window-size=1400,1000", "--user-data-dir=" + profile):
    opts.add_argument(a)
driver = webdriver.Chrome(service=Service(find_binary("chromedriver")), options=opts)
wait = WebDriverWait(driver, 15, poll_frequency=0.1,
                     ignored_exceptions=[StaleElementReferenceException, NoSuchElementException])


def row_status(run):
    rows = driver.find_elements(By.CSS_SELECTOR, f'#runs tr[data-run="{run}"]')
    return rows[0].get_attribute("data-status") if rows else None


def click(css):
    """Clicks what css names; the page redraws the runs list, the DAG and
    the Gantt as events come, so an element found may be replaced before
    the click lands: found again then."""
    for _ in range(50):
        try:
            driver.find_element(By.CSS_SELECTOR, css).click()
            return
        except StaleElementReferenceException:
            time.sleep(0.05)
    raise TimeoutException("kept being redrawn: " + css)


def wait_for(fn, name, why):
    try:
        wait.until(lambda d: fn())
        check(True, name)
        return True
    except TimeoutException:
        check(False, name, why())
        return False


def remote_checks():
    driver.get(base + "/")
    wait_for(lambda: driver.find_element(By.ID, "token-dialog").get_attribute("open") is not None,
             "where reads need the token, the page asks for it", lambda: driver.page_source[:1500])
    driver.find_element(By.ID, "token-input").send_keys(token)
    driver.find_element(By.ID, "token-ok").click()
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#runs tbody tr"),
             "then lists the runs", lambda: driver.find_element(By.ID, "health").text)
    wait_for(lambda: driver.find_element(By.ID, "live").text == "live",
             "and follows the events with it", lambda: driver.find_element(By.ID, "live").text)
    check(driver.find_element(By.ID, "token-dialog").get_attribute("open") is None,
          "having asked once")


def open_with(kept, run):
    """The page loaded with `kept` as the tab's token, run `run` opened."""
    driver.get(base + "/")
    driver.execute_script("sessionStorage.setItem('switchyard.token', arguments[0])", kept)
    driver.get(base + "/#run=" + str(run))
    wait.until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    wait_for(lambda: driver.find_element(By.ID, "run").get_attribute("data-run") == str(run),
             "the run opens", lambda: driver.find_element(By.ID, "run").text[:500])


def role_checks():
    slow = submit("slow")
    open_with(read_token, slow)
    wait_for(lambda: "(read)" in driver.find_element(By.ID, "token-who").text,
             "with a read token the page names its role",
             lambda: driver.find_element(By.ID, "token-who").text)
    wait_for(lambda: not driver.find_element(By.ID, "btn-cancel").is_displayed()
             and not driver.find_element(By.ID, "btn-retry").is_displayed(),
             "and shows no action button", lambda: driver.find_element(By.ID, "run").text[:500])
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    check(not errors, "no script error", json.dumps(errors))
    open_with(token, slow)
    wait_for(lambda: "(operate)" in driver.find_element(By.ID, "token-who").text,
             "with an operate token the page names its role",
             lambda: driver.find_element(By.ID, "token-who").text)
    wait_for(lambda: driver.find_element(By.ID, "btn-cancel").is_displayed()
             and driver.find_element(By.ID, "btn-retry").is_displayed(),
             "and shows cancel and retry", lambda: driver.find_element(By.ID, "run").text[:500])
    wait_for(lambda: row_status(slow) == "Running" and
             driver.find_element(By.ID, "btn-cancel").is_enabled(),
             "cancel is enabled for the running run", lambda: str(row_status(slow)))
    driver.find_element(By.ID, "btn-cancel").click()
    wait_for(lambda: row_status(slow) == "Cancelled", "the operate token cancels it",
             lambda: str(row_status(slow)) + " " + driver.find_element(By.ID, "action-msg").text)
    check(driver.find_element(By.ID, "token-dialog").get_attribute("open") is None,
          "without a token dialog")


def text_of(css):
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]); return e ? e.textContent : null", css)


def events_checks():
    driver.get(base + "/#events")
    wait.until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    wait_for(lambda: driver.find_element(By.ID, "live").text == "live"
             and driver.find_element(By.ID, "events-pane").is_displayed()
             and not driver.find_element(By.ID, "runs-pane").is_displayed(),
             "#events shows the events view instead of the runs",
             lambda: driver.find_element(By.TAG_NAME, "main").text[:500])
    driver.execute_script("window.syNoReload = 42")
    fired = post("/api/v1/events", {"name": "file.landed", "data": {"bucket": "raw",
                 "path": "a.csv"}, "key": "a.csv"})["event_id"]
    passed = post("/api/v1/events", {"name": "file.landed", "data": {"bucket": "cooked"}})["event_id"]
    chip = f'#events tr[data-event="{fired}"] .use[data-trigger="landed/raw"][data-outcome="fired"] a'
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, chip),
             "an event that fired a trigger shows live, with the run it started",
             lambda: driver.find_element(By.ID, "events-list").text[:1500])
    run = int((text_of(chip) or "#0").split("#")[1])
    check(text_of(f'#events tr[data-event="{fired}"]').startswith(f"#{fired}file.landeda.csv"),
          "its id, name and key", text_of(f'#events tr[data-event="{fired}"]') or "")
    check('"bucket":"raw"' in (text_of(f'#events tr[data-event="{fired}"] td.payload') or ""),
          "and a preview of its payload", text_of(f'#events tr[data-event="{fired}"]') or "")
    other = f'#events tr[data-event="{passed}"] .use[data-outcome="passed"]'
    wait_for(lambda: "cooked" in (text_of(other) or "") or "raw" in (text_of(other) or ""),
             "the other event: passed over, and why",
             lambda: text_of(f'#events tr[data-event="{passed}"]') or "no row")
    rows = driver.execute_script(
        "return [...document.querySelectorAll('#events tbody tr')].map(r => Number(r.dataset.event))")
    check(rows[:2] == [passed, fired], "latest first", json.dumps(rows))
    check(driver.execute_script("return window.syNoReload") == 42, "without a reload")
    driver.save_screenshot(shot)
    print("# screenshot: " + shot)

    click('#views a[href="#triggers"]')
    card = '#triggers-list .trigger[data-trigger="landed/raw"]'
    wait_for(lambda: f"run #{run}" in (text_of(card + " dd.last-firing") or ""),
             "the triggers view: the trigger's last firing and its run",
             lambda: driver.find_element(By.ID, "triggers-list").text[:1500])
    card_text = text_of(card) or ""
    check("event file.landed when bucket equals" in card_text and "0 pending" in card_text,
          "what fires it and what is pending", card_text)
    check(f"event #{passed} (file.landed)" in (text_of(card + " ul.passed") or ""),
          "and the event passed over, with why", card_text)
    and_card = '#triggers-list .trigger[data-trigger="both/and"]'
    check("still waiting" in (text_of(and_card + " li.waiting") or ""),
          "an AND shows the part it waits for", text_of(and_card) or "no card")
    driver.save_screenshot(shot.replace("events", "triggers"))
    print("# screenshot: " + shot.replace("events", "triggers"))

    first = submit("conv", {"file": "x.csv"})
    wait.until(lambda d: get(f"/api/v1/runs/{first}")["status"] == "Completed")
    second = submit("conv", {"file": "x.csv"})
    driver.get(base + f"/#run={second}")
    node = '#dag g.node[data-task="a"][data-cached="1"]'
    wait_for(lambda: "(cached)" in (text_of(node) or ""),
             "a task Completed from the cache is marked (cached) in the DAG",
             lambda: driver.find_element(By.ID, "dag").get_attribute("innerHTML")[:1500])
    check(driver.find_elements(By.CSS_SELECTOR, '#gantt rect.bar[data-task="a"][data-cached="1"]')
          and "a (cached)" in (text_of("#gantt svg") or ""),
          "and in the Gantt", driver.find_element(By.ID, "gantt").get_attribute("innerHTML")[:1500])
    click(node)
    wait_for(lambda: (text_of("#detail-outcome") or "") == "Completed (cached)",
             "and in the attempt's detail", lambda: text_of("#detail") or "no detail")
    check(text_of("#detail-cache") == f"completed from the cache: the output of run {first}",
          "which names the run whose output it took", text_of("#detail") or "no detail")
    first_node = '#dag g.node[data-task="b"]'
    check(driver.find_elements(By.CSS_SELECTOR, first_node)
          and not driver.find_elements(By.CSS_SELECTOR, first_node + '[data-cached="1"]'),
          "a task that ran is not marked")
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    check(not errors, "no script error", json.dumps(errors))


try:
    if events:
        events_checks()
        raise SystemExit
    if remote:
        remote_checks()
        raise SystemExit
    if roles:
        role_checks()
        raise SystemExit
    driver.get(base + "/")
    wait.until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    check(driver.title == "Switchyard", "the page loads from /")
    wait_for(lambda: driver.find_element(By.ID, "live").text == "live",
             "it follows the events stream", lambda: driver.find_element(By.ID, "live").text)
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    check(not errors, "no script error", json.dumps(errors))
    # A mark that a reload would lose.
    driver.execute_script("window.syNoReload = 42")

    steady = submit("steady")
    wait_for(lambda: row_status(steady) in ("Pending", "Running"),
             "a run submitted while the page is open appears", lambda: driver.page_source[:2000])
    click(f'#runs tr[data-run="{steady}"]')
    wait_for(lambda: driver.find_elements(
        By.CSS_SELECTOR, '#dag g.node[data-task="work"][data-state="Running"]'),
        "its DAG shows the task Running", lambda: driver.find_element(By.ID, "dag").get_attribute("innerHTML")[:1500])
    wait_for(lambda: row_status(steady) == "Completed",
             "the run completes live in the list", lambda: str(row_status(steady)))
    wait_for(lambda: driver.find_element(By.ID, "run").get_attribute("data-status") == "Completed",
             "and in the run's pane", lambda: driver.find_element(By.ID, "run").get_attribute("data-status"))
    check(driver.execute_script("return window.syNoReload") == 42, "without a reload")
    # Read in one go in the page: a redraw between two reads here would
    # leave stale elements.
    states = dict(driver.execute_script(
        "return [...document.querySelectorAll('#dag g.node')]"
        ".map(g => [g.dataset.task, g.dataset.state])"))
    check(states == {"prepare": "Completed", "work": "Completed"}, "every DAG node Completed",
          json.dumps(states))

    flaky = submit("flaky")
    wait_for(lambda: row_status(flaky) == "Failed", "a failing run shows Failed",
             lambda: str(row_status(flaky)))
    click(f'#runs tr[data-run="{flaky}"]')
    wait_for(lambda: driver.find_elements(
        By.CSS_SELECTOR, '#dag g.node[data-task="then"][data-state="Failed"]'),
        "its DAG shows the failed task", lambda: driver.find_element(By.ID, "dag").get_attribute("innerHTML")[:1500])
    check(driver.execute_script("return document.querySelectorAll('#dag path.edge').length") == 2,
          "with its edges")
    bar = '#gantt rect.bar[data-task="then"][data-attempt="1"][data-outcome="Failed"]'
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, bar),
             "the Gantt has its failed attempt", lambda: driver.find_element(By.ID, "gantt").get_attribute("innerHTML")[:1500])
    click(bar)
    wait_for(lambda: "exited with status 3" in driver.find_element(By.ID, "detail").text,
             "the attempt's detail says its exit status", lambda: driver.find_element(By.ID, "detail").text)
    wait_for(lambda: "not there yet" in driver.find_element(By.ID, "detail-logs").text,
             "and shows its log tail", lambda: driver.find_element(By.ID, "detail").text)

    failed_shot = shot.replace(".png", "-failed.png")
    driver.save_screenshot(failed_shot)
    print("# screenshot: " + failed_shot)

    # A wrong token: the API's refusal shown, the token forgotten.
    driver.find_element(By.ID, "btn-retry").click()
    wait_for(lambda: driver.find_element(By.ID, "token-dialog").get_attribute("open") is not None,
             "retry asks for the token", lambda: "no dialog")
    driver.find_element(By.ID, "token-input").send_keys("not-the-token-0123456789")
    driver.find_element(By.ID, "token-ok").click()
    wait_for(lambda: "the token is wrong" in driver.find_element(By.ID, "action-msg").text,
             "a wrong token: the API's error line is shown",
             lambda: driver.find_element(By.ID, "action-msg").text)
    check(driver.execute_script("return sessionStorage.getItem('switchyard.token')") is None,
          "and the wrong token is not kept")

    open(flag, "w").close()
    driver.find_element(By.ID, "btn-retry").click()
    wait_for(lambda: driver.find_element(By.ID, "token-dialog").get_attribute("open") is not None,
             "retry asks again", lambda: "no dialog")
    driver.find_element(By.ID, "token-input").send_keys(token)
    driver.find_element(By.ID, "token-ok").click()
    wait_for(lambda: row_status(flaky) == "Completed", "after retry the run completes live",
             lambda: str(row_status(flaky)) + " " + driver.find_element(By.ID, "action-msg").text)
    wait_for(lambda: driver.find_elements(
        By.CSS_SELECTOR, '#gantt rect.bar[data-task="then"][data-attempt="2"][data-outcome="Completed"]'),
        "the Gantt shows the second attempt Completed",
        lambda: driver.find_element(By.ID, "gantt").get_attribute("innerHTML")[:2000])
    check(driver.execute_script("return sessionStorage.getItem('switchyard.token')") == token,
          "the token is kept for the tab")
    check(driver.execute_script("return window.syNoReload") == 42, "still without a reload")

    # Cancel, with the token kept: no dialog.
    slow = submit("slow")
    wait_for(lambda: row_status(slow) == "Running", "a long run shows Running",
             lambda: str(row_status(slow)))
    click(f'#runs tr[data-run="{slow}"]')
    wait_for(lambda: driver.find_element(By.ID, "run").get_attribute("data-run") == str(slow)
             and driver.find_element(By.ID, "btn-cancel").is_enabled(),
             "its cancel button is enabled", lambda: driver.find_element(By.ID, "run").text[:500])
    driver.find_element(By.ID, "btn-cancel").click()
    wait_for(lambda: row_status(slow) == "Cancelled", "cancel stops it, seen live",
             lambda: str(row_status(slow)) + " " + driver.find_element(By.ID, "action-msg").text)
    check(driver.find_element(By.ID, "token-dialog").get_attribute("open") is None,
          "without asking for the token again")

    click(f'#runs tr[data-run="{flaky}"]')
    wait_for(lambda: driver.find_elements(
        By.CSS_SELECTOR, '#gantt rect.bar[data-task="then"][data-attempt="2"]'),
        "the retried run opens again", lambda: driver.find_element(By.ID, "run").text[:500])
    click('#gantt rect.bar[data-task="then"][data-attempt="2"]')
    wait_for(lambda: "passed" in driver.find_element(By.ID, "detail-logs").text,
             "the second attempt's detail has its own log", lambda: driver.find_element(By.ID, "detail").text)
    driver.execute_script("window.scrollTo(0, 0)")
    time.sleep(0.3)
    driver.save_screenshot(shot)
    check(os.path.getsize(shot) > 10000, "a screenshot is saved", shot)
    print("# screenshot: " + shot)
except SystemExit:
    pass
except (WebDriverException, OSError) as e:
    check(False, "the browser session", str(e).splitlines()[0] if str(e) else repr(e))
finally:
    driver.quit()
sys.exit(1 if failed else 0)
