//! A Prometheus histogram of fixed buckets that records without a lock: a bucket's count
//! and the sum are atomics (prometheus-client's own histogram takes a mutex on every
//! observation: most of what timing a request cost). It encodes as prometheus-client's
//! does. A scrape reads the counts and the sum one by one, so it may see an observation in
//! one and not yet in the other.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::exemplar::Exemplar;
use prometheus_client::metrics::{MetricType, TypedMetric};

/// A histogram; cheap to clone (the clones share it).
#[derive(Clone, Debug)]
pub(crate) struct Histogram {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The buckets' upper bounds, ascending (`+Inf` follows).
    bounds: &'static [f64],
    /// Observations per bucket (not cumulative), `+Inf`'s last.
    counts: Box<[AtomicU64]>,
    /// The sum of the observations, as `f64` bits.
    sum: AtomicU64,
}

impl Histogram {
    /// An empty histogram with buckets up to each of `bounds` (ascending), then `+Inf`.
    pub fn new(bounds: &'static [f64]) -> Self {
        let counts = (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
        Histogram {
            inner: Arc::new(Inner {
                bounds,
                counts,
                sum: AtomicU64::new(0f64.to_bits()),
            }),
        }
    }

    /// Records `value`. Its bucket is found from the smallest up: a quick observation (most
    /// are) costs one comparison, and only a slow one pays for the search.
    pub fn observe(&self, value: f64) {
        let inner = &*self.inner;
        let bounds = inner.bounds;
        let bucket = (bounds.iter())
            .position(|bound| value <= *bound)
            .unwrap_or(bounds.len());
        inner.counts[bucket].fetch_add(1, Relaxed);
        let add = |bits| Some((f64::from_bits(bits) + value).to_bits());
        let _ = inner.sum.fetch_update(Relaxed, Relaxed, add);
    }
}

impl TypedMetric for Histogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for Histogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let inner = &*self.inner;
        let bounds = inner.bounds.iter().copied().chain([f64::INFINITY]);
        let counts = inner.counts.iter().map(|count| count.load(Relaxed));
        let buckets: Vec<(f64, u64)> = bounds.zip(counts).collect();
        let count = buckets.iter().map(|(_, count)| count).sum();
        let sum = f64::from_bits(inner.sum.load(Relaxed));
        encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None::<&Exemplars>)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

/// No exemplars.
type Exemplars = std::collections::HashMap<usize, Exemplar<NoLabelSet, f64>>;

#[cfg(test)]
mod tests {
    use prometheus_client::encoding::text::encode;
    use prometheus_client::registry::Registry;

    use super::*;

    #[test]
    fn encodes_as_prometheus_reads_a_histogram() {
        const BOUNDS: [f64; 2] = [0.5, 1.0];
        let histogram = Histogram::new(&BOUNDS);
        for value in [0.5, 0.75, 2.0] {
            histogram.observe(value);
        }
        let mut registry = Registry::default();
        registry.register("t", "T", histogram);
        let mut text = String::new();
        encode(&mut text, &registry).expect("encodes");
        for line in [
            "# TYPE t histogram",
            "t_sum 3.25",
            "t_count 3",
            r#"t_bucket{le="0.5"} 1"#,
            r#"t_bucket{le="1.0"} 2"#,
            r#"t_bucket{le="+Inf"} 3"#,
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in:\n{text}");
        }
    }
}
