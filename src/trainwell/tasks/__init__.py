"""What differs per task (loss, metrics, predictions). Classification for now."""
