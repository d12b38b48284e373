"""The product without a screen: the runtime (the lifecycle), the services it holds and hands to the UI, and the
background capabilities (campaigns, alerts). No Textual, no argparse (docs/ARCHITECTURE.md, "Services, handed down")."""
