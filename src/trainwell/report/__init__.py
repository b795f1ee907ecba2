"""Run outputs: metrics.csv, TensorBoard events, plots and the self-contained report.html."""
