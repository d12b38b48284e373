"""The Chats send form's blocks, one widget per file (the kinds' forms, the head, the chat actions), composed by
`tui.ui.sections.chats.form.ChatForm` inside `tui.ui.sections.chats.section.ChatsSection`."""
