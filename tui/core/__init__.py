"""The product without a screen: background capabilities (alerts, ...) with no Textual and no argparse."""
