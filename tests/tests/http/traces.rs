//! One trace per task across processes: our client (`taskwire call`) makes a task on a front of
//! a PostgreSQL fleet, a worker runs it, and each process exports its spans over OTLP/HTTP
//! (JSON) to a collector in this test. The spans form one trace: the client's `tools/call`,
//! the front's `tools/call` under it (the `traceparent` the client put in `_meta`), the
//! front's store write under that, the worker's work under the client's span (the context
//! the task's stored request kept), its status changes as events, its store writes under it.

use std::time::Duration;

use taskwire_demo::tools::{DONE_MESSAGE, STEPS};
use taskwire_tests::fleet::{log_of, server_argv, Worker};
use taskwire_tests::otlp::{Collector, Span};
use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::peers::{run, Argv};
use taskwire_tests::postgres::fresh_database;
use taskwire_tests::procs;

const TOOL: &str = "long_running_task";

fn one<'a>(spans: &'a [Span], what: &str, pick: impl Fn(&Span) -> bool) -> &'a Span {
    let found: Vec<&Span> = spans.iter().filter(|s| pick(s)).collect();
    assert_eq!(found.len(), 1, "one {what}: {found:#?}\nof {spans:#?}");
    found[0]
}

#[test]
fn a_task_is_one_trace_from_our_client_through_a_front_to_the_worker_that_ran_it() {
    let Some(database) = fresh_database("fleet_traces") else {
        return;
    };
    let collector = Collector::start();
    let front = HttpServer::start(
        |port| {
            let argv = server_argv(&database, "front", 15_000, 100).args(&[
                "--role",
                "front",
                "--http",
                &format!("127.0.0.1:{port}"),
            ]);
            collector.traced(argv, "front")
        },
        Some(&log_of(&database, "front")),
    );
    let argv = collector.traced(server_argv(&database, "worker", 15_000, 100), "worker");
    let worker = Worker::spawn(&database, "worker", argv);
    let client = Argv::new(procs::taskwire()).args(&["--json", "call", TOOL, "--url", &front.url]);
    let done = run(&collector.traced(client, "client"), Duration::from_secs(60));
    assert_eq!(done.code, Some(0), "{done}");

    let ended = |s: &Span| {
        s.service == "worker"
            && s.events
                .iter()
                .any(|(name, a)| name == "work ended" && a.to_string().contains("completed"))
    };
    let spans = collector.until("the client's span and the worker's ended work", |spans| {
        spans.iter().any(ended) && spans.iter().any(|s| s.service == "client")
    });
    let client = one(&spans, "client call", |s| {
        s.service == "client" && s.kind == 3
    });
    assert_eq!(client.name, format!("tools/call {TOOL}"));
    assert!(
        client.parent.is_empty(),
        "the client's span is the root: {client:?}"
    );
    let trace = &client.trace;
    for span in &spans {
        assert_eq!(
            &span.trace, trace,
            "every span is in the client's trace: {span:?}"
        );
    }

    let call = one(&spans, "front call", |s| {
        s.service == "front" && s.kind == 2
    });
    assert_eq!(call.name, format!("tools/call {TOOL}"));
    assert_eq!(
        call.parent, client.id,
        "the front continues the client's span"
    );
    let task = call
        .attribute("mcp.task.id")
        .expect("the call names its task");
    assert_eq!(call.attribute("gen_ai.tool.name").as_deref(), Some(TOOL));
    let front_writes: Vec<&Span> = spans
        .iter()
        .filter(|s| s.service == "front" && s.name.starts_with("store write"))
        .collect();
    assert!(
        !front_writes.is_empty(),
        "the front's write of the queued task"
    );
    for write in front_writes {
        assert_eq!(write.parent, call.id, "{write:?}");
        let store = write.attribute("taskwire.store").unwrap_or_default();
        assert!(store.starts_with("postgres://"), "{write:?}");
    }

    let work = one(&spans, "worker's work", ended);
    assert_eq!(work.name, format!("work {TOOL}"));
    assert_eq!(
        work.parent, client.id,
        "the worker continues the stored context"
    );
    assert_eq!(work.attribute("mcp.task.id"), Some(task));
    let messages: Vec<String> = work
        .events
        .iter()
        .filter(|(name, _)| name == "task status")
        .filter_map(|(_, a)| taskwire_tests::otlp::attribute_of(a, "status_message"))
        .collect();
    for step in STEPS.iter().chain([&DONE_MESSAGE]) {
        assert!(
            messages.iter().any(|m| m == step),
            "no {step:?} in {:#?}",
            work.events
        );
    }
    let worker_writes = spans
        .iter()
        .filter(|s| s.service == "worker" && s.name.starts_with("store write"));
    assert!(worker_writes.clone().count() >= 2, "{spans:#?}");
    for write in worker_writes {
        assert_eq!(write.parent, work.id, "{write:?}");
    }
    drop(worker);
}

#[test]
fn the_variables_say_where_and_how_spans_go_or_that_none_do() {
    let collector = Collector::start();
    // `taskwire call` of our stdio server (which inherits the variables), with `env` added.
    let call = |argv: Argv, env: &[(&str, &str)]| {
        let mut argv = argv
            .args(&["--json", "call", TOOL, "--"])
            .arg(procs::task_server())
            .args(&["--step-ms", "10"])
            .env("RUST_LOG", "warn");
        for (key, value) in env {
            argv = argv.env(key, value);
        }
        let done = run(&argv, Duration::from_secs(60));
        assert_eq!(done.code, Some(0), "{done}");
        done
    };
    let traced = || collector.traced(Argv::new(procs::taskwire()), "client");
    for off in [
        ("OTEL_SDK_DISABLED", "true"),
        ("OTEL_TRACES_EXPORTER", "none"),
    ] {
        call(traced(), &[off]);
    }
    let refused = call(traced(), &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]);
    assert!(
        refused
            .stderr
            .contains(r#"the OTLP protocol "grpc" is not built in (http/protobuf and http/json are); spans are not exported"#),
        "{refused}"
    );
    // Each process flushes as it exits: nothing came.
    assert!(collector.spans().is_empty(), "{:#?}", collector.spans());
    assert_eq!(collector.protobuf_bodies(), 0);

    // The full URL of the traces endpoint, and protobuf by default.
    let url = format!("{}/v1/traces", collector.url);
    call(
        Argv::new(procs::taskwire()),
        &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", &url)],
    );
    assert!(collector.protobuf_bodies() > 0, "no protobuf body came");
    // JSON, and the service named after the executable without OTEL_SERVICE_NAME.
    let endpoint = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
    ];
    call(Argv::new(procs::taskwire()), &endpoint);
    collector.until("the client's spans named after its executable", |spans| {
        spans.iter().any(|s| s.service == "taskwire")
    });
}

#[test]
fn a_question_is_a_span_of_the_work_and_a_cancel_ends_it_saying_why() {
    let collector = Collector::start();
    let server = HttpServer::start(
        |port| {
            let argv = Argv::new(procs::task_server()).args(&[
                "--http",
                &format!("127.0.0.1:{port}"),
                "--step-ms",
                "1000",
                "--extra-tools",
            ]);
            collector.traced(argv, "server")
        },
        None,
    );
    let taskwire = |args: &[&str]| {
        let argv = Argv::new(procs::taskwire())
            .args(args)
            .args(&["--url", &server.url]);
        run(&collector.traced(argv, "client"), Duration::from_secs(60))
    };
    let work_of = |tool: &str| {
        let name = format!("work {tool}");
        move |s: &Span| s.service == "server" && s.name == name
    };
    let statuses = |work: &Span| -> Vec<String> {
        (work.events.iter())
            .filter(|(name, _)| name == "task status")
            .filter_map(|(_, a)| taskwire_tests::otlp::attribute_of(a, "status"))
            .collect()
    };

    // A question: a span under the work, from the ask to the answer.
    let answers = std::env::temp_dir().join(format!("traces-answers-{}.json", std::process::id()));
    std::fs::write(
        &answers,
        r#"{"action": "accept", "content": {"confirm": true}}"#,
    )
    .unwrap();
    let confirmed = taskwire(&[
        "call",
        "confirm_task",
        "--answers",
        answers.to_str().unwrap(),
    ]);
    assert_eq!(confirmed.code, Some(0), "{confirmed}");
    let spans = collector.until("the confirmed work and its question", |spans| {
        spans.iter().any(work_of("confirm_task"))
            && spans.iter().any(|s| s.name == "elicitation/create")
    });
    let work = one(&spans, "the confirming work", work_of("confirm_task"));
    let question = one(&spans, "the question", |s| s.name == "elicitation/create");
    assert_eq!(question.parent, work.id);
    assert_eq!(question.attribute("error"), None, "answered: {question:?}");

    // A cancel: the work's last status is `cancelled`, and it says why it stopped.
    let made = taskwire(&["call", TOOL, "--detach"]);
    assert_eq!(made.code, Some(0), "{made}");
    let task = made.stdout.lines().last().unwrap_or_default().to_owned();
    let cancelled = taskwire(&["tasks", "cancel", &task]);
    assert_eq!(cancelled.code, Some(3), "{cancelled}");
    let spans = collector.until("the work stopped by the cancel", |spans| {
        spans.iter().any(work_of(TOOL))
    });
    let work = one(&spans, "the cancelled work", work_of(TOOL));
    assert_eq!(work.attribute("mcp.task.id"), Some(task));
    assert_eq!(
        statuses(work).last().map(String::as_str),
        Some("cancelled"),
        "{work:?}"
    );
    let stopped = (work.events.iter())
        .find(|(name, _)| name == "work stopped before it ended")
        .and_then(|(_, a)| taskwire_tests::otlp::attribute_of(a, "reason"));
    assert_eq!(stopped.as_deref(), Some("cancelled"), "{work:?}");
}
