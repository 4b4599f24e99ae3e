"""The app's dialogs (modal screens that dismiss with a value): below the screens, which
use them, and above the Textual-free state; a dialog never imports a screen."""
