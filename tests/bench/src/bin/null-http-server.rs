//! `null-http-server ADDR`: an HTTP server that does as little as one can, the floor (the
//! "limit") of the HTTP benchmark (`http-bench`): hyper 1 on a multi-threaded tokio runtime,
//! HTTP/1.1 keep-alive, every request answered `200` with one fixed JSON-RPC result, whatever
//! it asked. It prints `listening on ADDR` once bound and runs until killed.

use std::convert::Infallible;
use std::process::ExitCode;

use clap::Parser;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

/// A do-nothing HTTP server, the floor of `http-bench`: every request answered `200` with one
/// fixed JSON-RPC result. Prints `listening on ADDR` once bound and runs until killed.
#[derive(Debug, Parser)]
#[command(name = "null-http-server", version)]
struct Args {
    /// The address to listen on, e.g. 127.0.0.1:8080 (port 0: any free one).
    #[arg(value_name = "ADDR")]
    address: String,
}

/// The one answer.
const BODY: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"x"}]}}"#;

async fn answer(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    // The body is read (and dropped), as any server must before it answers.
    let _ = http_body_util::BodyExt::collect(request.into_body()).await;
    let mut response = Response::new(Full::new(Bytes::from_static(BODY)));
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

fn main() -> ExitCode {
    let address = Args::parse().address;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("null-http-server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served: std::io::Result<()> = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&address).await?;
        println!("listening on {}", listener.local_addr()?);
        loop {
            let (stream, _) = listener.accept().await?;
            tokio::spawn(async move {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service_fn(answer))
                    .await;
            });
        }
    });
    if let Err(e) = served {
        eprintln!("null-http-server: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
