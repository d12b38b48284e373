"""The Chats send form's blocks, one widget per file (the kinds' forms, the head, the chat actions), composed by
`tui.widgets.chats.form.ChatForm` inside `tui.screens.chats.ChatsSection`."""
