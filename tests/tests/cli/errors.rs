//! What a newcomer meets on the command line (issue 37): `ID=$(taskwire call … --detach)`
//! takes the id alone; errors say what to do: a refused connection names the URL, a URL
//! without a scheme or with no MCP endpoint (404, 405) shows what one looks like, a plain
//! call of a tool that runs only as a task says to drop `--plain`, arguments of the wrong
//! type name the field, and an id the server does not know (stray lines in it included) is
//! named as such instead of failing as an HTTP "builder error".

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use serde_json::Value;
use taskwire_tests::peers::http::{free_port, HttpServer};
use taskwire_tests::peers::{run, Argv, Run};
use taskwire_tests::procs;

const LIMIT: Duration = Duration::from_secs(60);

fn taskwire(args: &[&str]) -> Run {
    run(&Argv::new(procs::taskwire()).args(args), LIMIT)
}

/// `task-server --http` with `args`, its `/mcp` URL in `.url`.
fn http_server(args: &[&str]) -> HttpServer {
    HttpServer::start(
        |port| {
            Argv::new(procs::task_server())
                .args(&["--http", &format!("127.0.0.1:{port}")])
                .args(args)
        },
        None,
    )
}

/// The last JSON line's error message (an `error` event, or an `outcome`'s error).
fn error_message(run: &Run) -> String {
    let last = run.json_lines().pop().unwrap_or(Value::Null);
    last["error"]["message"].as_str().unwrap_or("").to_owned()
}

#[test]
fn detach_prints_the_task_id_alone_on_stdout() {
    let server = http_server(&["--step-ms", "200"]);
    let run = taskwire(&[
        "call",
        "long_running_task",
        "--detach",
        "--url",
        &server.url,
    ]);
    assert_eq!(run.code, Some(0), "{run}");
    let id = run.stdout.trim_end_matches('\n');
    assert_eq!(run.stdout, format!("{id}\n"), "the id and a newline: {run}");
    assert!(!id.is_empty() && !id.contains(char::is_whitespace), "{run}");
    // What happened goes to stderr, for people.
    assert!(run.stderr.contains("connected to task-server"), "{run}");
    assert!(run.stderr.contains(&format!("task created: {id}")), "{run}");
    // The captured id is the task's.
    let got = taskwire(&["--json", "tasks", "get", id, "--url", &server.url]);
    assert_eq!(got.code, Some(0), "{got}");
    assert_eq!(got.json_lines()[1]["task"]["taskId"], id, "{got}");
}

#[test]
fn a_refused_connection_says_so_and_names_the_url() {
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let run = taskwire(&["tools", "--url", &url]);
    assert_eq!(run.code, Some(5), "{run}");
    assert!(run.stderr.contains("connection refused"), "{run}");
    assert!(run.stderr.contains(&url), "{run}");
}

#[test]
fn a_url_without_a_scheme_or_an_endpoint_shows_what_one_looks_like() {
    let server = http_server(&[]);
    let bare = server.url.trim_start_matches("http://");
    let run = taskwire(&["tools", "--url", bare]);
    assert_eq!(run.code, Some(5), "{run}");
    assert!(run.stderr.contains("has no scheme"), "{run}");
    assert!(
        run.stderr.contains(&format!("did you mean http://{bare}?")),
        "{run}"
    );
    assert!(!run.stderr.contains("builder error"), "{run}");

    // Our server at the root: 404.
    let root = server.url.trim_end_matches("mcp");
    let run = taskwire(&["tools", "--url", root]);
    assert_eq!(run.code, Some(5), "{run}");
    assert!(run.stderr.contains("404 Not Found"), "{run}");
    assert!(run.stderr.contains("no MCP endpoint there"), "{run}");
    assert!(run.stderr.contains("http://HOST:PORT/mcp"), "{run}");

    // A web server that takes no POST there: 405.
    let url = refusing_posts();
    let run = taskwire(&["tools", "--url", &url]);
    assert_eq!(run.code, Some(5), "{run}");
    assert!(run.stderr.contains("405 Method Not Allowed"), "{run}");
    assert!(
        run.stderr.contains(&format!("from {url}: no MCP endpoint")),
        "{run}"
    );
}

/// A web server on a free port answering every request `405 Method Not Allowed`; its URL.
fn refusing_posts() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let url = format!("http://{}/", listener.local_addr().expect("an address"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            // The whole request is read first (closing on unread bytes would reset the
            // connection before the client reads the answer).
            let mut reader = BufReader::new(&stream);
            let mut length = 0;
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                if let Some((name, value)) = line.split_once(':') {
                    if name.eq_ignore_ascii_case("content-length") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                }
                line.clear();
            }
            let _ = reader.read_exact(&mut vec![0; length]);
            let _ = (&stream).write_all(
                b"HTTP/1.1 405 Method Not Allowed\r\nallow: GET\r\ncontent-length: 0\r\n\
                  connection: close\r\n\r\n",
            );
        }
    });
    url
}

#[test]
fn a_plain_call_of_a_tool_that_runs_only_as_a_task_says_to_drop_plain() {
    let server = http_server(&["--required-tool", "--step-ms", "50"]);
    let args = [
        "--json",
        "call",
        "long_running_task_required",
        "--plain",
        "--era",
        "2026-07-28",
        "--url",
        &server.url,
    ];
    let run = taskwire(&args);
    assert_eq!(run.code, Some(1), "{run}");
    let message = error_message(&run);
    assert!(message.contains("(-32021)"), "{run}");
    assert!(
        message.contains("the tool runs only as a task: call it without --plain"),
        "{run}"
    );
    // Without --plain it runs, as a task.
    let args = ["call", "long_running_task_required", "--url", &server.url];
    let run = taskwire(&args);
    assert_eq!(run.code, Some(0), "{run}");
}

#[test]
fn an_argument_of_the_wrong_type_is_named() {
    let argv = Argv::new(procs::taskwire())
        .args(&[
            "--json",
            "call",
            "progress_task",
            "--args",
            r#"{"steps": "many"}"#,
        ])
        .args(&[
            "--",
            &procs::task_server().to_string_lossy(),
            "--extra-tools",
        ]);
    let run = run(&argv, LIMIT);
    assert_eq!(run.code, Some(1), "{run}");
    let message = error_message(&run);
    assert!(
        message.contains(r#"steps: invalid type: string "many", expected u32"#),
        "{run}"
    );
}

#[test]
fn an_id_the_server_does_not_know_is_named_even_with_stray_lines_in_it() {
    let server = http_server(&[]);
    // What `ID=$(…)` held when --detach printed three lines.
    let id = "[  0.008s] connected to task-server 0.1.0\n01a24307-f92a-7222-a57f-93305f65ba01";
    let quoted = format!("{id:?}");
    for command in [
        &["tasks", "get"][..],
        &["tasks", "cancel"],
        &["tasks", "result"],
        &["wait"],
    ] {
        let mut args = command.to_vec();
        args.extend([id, "--url", &server.url]);
        let run = taskwire(&args);
        assert_eq!(run.code, Some(4), "{command:?}: {run}");
        assert!(
            run.stderr
                .contains(&format!("the server does not know the task {quoted}")),
            "{command:?}: {run}"
        );
        assert!(!run.stderr.contains("builder error"), "{command:?}: {run}");
    }
}
