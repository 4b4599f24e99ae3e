"""One module per screen: cases, editor, picker, stale, dialogs."""
