"""Every message type of Z-API's `ReceivedCallback` reads as text in the summary (the Events list and the event
detail) and in the inbox, never "(no content)".

Fixtures: the examples of Z-API's webhook documentation, github.com/Z-API/docs at commit e3df549, page
`en/webhooks/on-message-received-examples.mdx` ("Callback examples by type", and "Channel admin invite" from its
Channels section), one per accordion, named by its title, copied as the page has them with only the whitespace
between tokens removed. Notifications (calls, groups, profile) are not messages and stay out of the inbox.
"""

from __future__ import annotations

import json

import pytest

from tests.webhooks.conftest import record
from tui.webhooks.classify import classify
from tui.webhooks.conversations import Inbox

# (accordion title, body as the docs give it, summary, inbox kind, inbox text)
EXAMPLES = [
    # Text and media messages › Text
    ('Text',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228638000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","text":{"message":"test","description":"(optional) in case the message has a description inserted by WhatsApp","title":"(optional) in case the message has a title inserted by WhatsApp","url":"(optional) in case the message has a linked URL","thumbnailUrl":"(optional) in case the message has a thumbnail image"}}',
     'ReceivedCallback from name (5544999999999): test',
     'text', 'test'),
    # Text and media messages › Image
    ('Image',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228828000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","image":{"mimeType":"image/jpeg","imageUrl":"https://","thumbnailUrl":"https://","downloadError":null,"caption":"","width":600,"height":315,"viewOnce":true}}',
     'ReceivedCallback from name (5544999999999): [image]',
     'image', '[image]'),
    # Text and media messages › Audio
    ('Audio',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228849000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","audio":{"ptt":true,"seconds":10,"audioUrl":"https://","mimeType":"audio/ogg; codecs=opus","viewOnce":true}}',
     'ReceivedCallback from name (5544999999999): [audio] 10 s',
     'audio', '[audio] 10 s'),
    # Text and media messages › Video
    ('Video',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228889000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","video":{"videoUrl":"https://","caption":"","mimeType":"video/mp4","seconds":13,"viewOnce":true}}',
     'ReceivedCallback from name (5544999999999): [video]',
     'video', '[video]'),
    # Text and media messages › PTV (Circular video)
    ('PTV (Circular video)',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":true,"momment":1688496074000,"status":"RECEIVED","chatName":"eu","senderPhoto":"https://","senderName":"name","photo":"https://","broadcast":false,"participantPhone":"5544999999999","messageExpirationSeconds":0,"forwarded":true,"type":"ReceivedCallback","video":{"videoUrl":"https://","caption":"","mimeType":"video/mp4"}}',
     'ReceivedCallback to name (5544999999999): [video]',
     'video', '[video]'),
    # Text and media messages › GIF
    ('GIF',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228889000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","video":{"videoUrl":"https://","caption":"","mimeType":"video/mp4"}}',
     'ReceivedCallback from name (5544999999999): [video]',
     'video', '[video]'),
    # Text and media messages › Document
    ('Document',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228955000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","document":{"documentUrl":"https://","mimeType":"application/pdf","title":"name","pageCount":1,"fileName":"name.pdf"}}',
     'ReceivedCallback from name (5544999999999): [document] name.pdf',
     'document', '[document] name.pdf'),
    # Text and media messages › Contact
    ('Contact',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228925000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","contact":{"displayName":"Cesar Baleco","vCard":"BEGIN:VCARD\\nVERSION:3.0\\nN:;name;;;\\nFN:name\\nTEL;type=CELL;type=VOICE;waid=5544999999999:+55 44 9999-9999\\nEND:VCARD","phones":["5544999999999"]}}',
     'ReceivedCallback from name (5544999999999): [contact] Cesar Baleco',
     'contact', '[contact] Cesar Baleco'),
    # Text and media messages › Location
    ('Location',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228970000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","location":{"longitude":-99.999999999999999,"latitude":-99.9999999999999999,"address":"","url":""}}',
     'ReceivedCallback from name (5544999999999): [location]',
     'location', '[location]\n  (-100.0, -100.0)'),
    # Text and media messages › Sticker
    ('Sticker',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228982000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","sticker":{"stickerUrl":"https://","mimeType":"image/webp"}}',
     'ReceivedCallback from name (5544999999999): [sticker]',
     'sticker', '[sticker]'),
    # Reactions and interactions › Reaction
    ('Reaction',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228955000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","reaction":{"value":"❤️","time":1651878681150,"reactionBy":"554499999999","referencedMessage":{"messageId":"3EB0796DC6B777C0C7CD","fromMe":true,"phone":"5544999999999","participant":null}}}',
     'ReceivedCallback from name (5544999999999): [reaction] ❤️ to 3EB0796DC6B777C0C7CD',
     'reaction', '[reacted ❤️]'),
    # Polls › Poll (creation)
    ('Poll (creation)',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228638000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","poll":{"question":"Qual a melhor API de WhatsApp?","pollMaxOptions":0,"options":[{"name":"Z-API"},{"name":"Outras"}]}}',
     'ReceivedCallback from name (5544999999999): [poll] Qual a melhor API de WhatsApp? (Z-API, Outras)',
     'poll', '[poll] Qual a melhor API de WhatsApp?\n  ○ Z-API\n  ○ Outras'),
    # Polls › Poll vote
    ('Poll vote',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228638000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":"if group,this will be the participant who responded","photo":"https://","broadcast":false,"type":"ReceivedCallback","pollVote":{"pollMessageId":"ID of the poll message that was answered","options":[{"name":"Z-API"}]}}',
     'ReceivedCallback from name (5544999999999): [poll vote] Z-API',
     'vote', 'voted: Z-API'),
    # Buttons and lists › Action button response
    ('Action button response',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1634645380000,"status":"RECEIVED","chatName":"Nome","senderPhoto":"https://","senderName":"Nome","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"referenceMessageId":"A20DA9C0183A2D35A260F53F5D2B9244","forwarded":false,"type":"ReceivedCallback","buttonsResponseMessage":{"buttonId":"1","message":"Great"}}',
     'ReceivedCallback from Nome (5544999999999): [button reply] Great',
     'buttons', '[pressed] Great'),
    # Buttons and lists › List response
    ('List response',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1634645683000,"status":"RECEIVED","chatName":"Nome","senderPhoto":"https://","senderName":"Nome","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"referenceMessageId":"A20DA9C0183A2D35A260F53F5D2B9244","forwarded":false,"type":"ReceivedCallback","listResponseMessage":{"message":"Z-API Wings for your imagination","title":"Z-API","selectedRowId":"1"}}',
     'ReceivedCallback from Nome (5544999999999): [list reply] Z-API',
     'list', '[chose] Z-API'),
    # Buttons and lists › Button with image
    ('Button with image',
     r'{"isStatusReply":false,"chatLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"3C67AB641C8AA0412F6A2242B4E23AC7","messageId":"9D968A5FA2880508C4","phone":"554499999999","fromMe":false,"momment":1708455444850,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"554499999999","photo":null,"broadcast":false,"participantLid":null,"forwarded":false,"type":"ReceivedCallback","fromApi":false,"buttonsMessage":{"imageUrl":"Image URL","videoUrl":null,"message":"Message text","buttons":[{"buttonId":"1","type":1,"buttonText":{"displayText":"Button 1 text"}},{"buttonId":"2","type":1,"buttonText":{"displayText":"Button 2 text"}}]}}',
     'ReceivedCallback from 554499999999: [image] Message text [ Button 1 text ] [ Button 2 text ]',
     'buttons', '[image]\nMessage text\n[ Button 1 text ]  [ Button 2 text ]'),
    # Buttons and lists › Button with video
    ('Button with video',
     r'{"isStatusReply":false,"chatLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"3C67AB641C8AA0412F6A2242B4E23AC7","messageId":"9D968A5FA2880508C4","phone":"554499999999","fromMe":false,"momment":1708455444850,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"554499999999","photo":null,"broadcast":false,"participantLid":null,"forwarded":false,"type":"ReceivedCallback","fromApi":false,"buttonsMessage":{"imageUrl":null,"videoUrl":"Video URL","message":"Message text","buttons":[{"buttonId":"1","type":1,"buttonText":{"displayText":"Button 1 text"}},{"buttonId":"2","type":1,"buttonText":{"displayText":"Button 2 text"}}]}}',
     'ReceivedCallback from 554499999999: [video] Message text [ Button 1 text ] [ Button 2 text ]',
     'buttons', '[video]\nMessage text\n[ Button 1 text ]  [ Button 2 text ]'),
    # Buttons and lists › OTP button
    ('OTP button',
     r'{"isStatusReply":false,"chatLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"3C67AB641C8AA0412F6A2242B4E23AC7","messageId":"9D968A5FA2880508C4","phone":"554499999999","fromMe":false,"momment":1708455444850,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"554499999999","photo":null,"broadcast":false,"participantLid":null,"forwarded":false,"type":"ReceivedCallback","fromApi":false,"hydratedTemplate":{"header":{},"message":"message text","footer":"","title":"","templateId":"","hydratedButtons":[{"urlButton":{"displayText":"Copy code","url":"https://www.whatsapp.com/otp/code/?otp_type=COPY_CODE&code=otp123"},"index":0}]}}',
     'ReceivedCallback from 554499999999: [template] message text [ Copy code: otp123 ]',
     'template', '[template] message text\n[ Copy code: otp123 ]'),
    # Buttons and lists › PIX button
    ('PIX button',
     r'{"isStatusReply":false,"chatLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"3C67AB641C8AA0412F6A2242B4E23AC7","messageId":"9D968A5FA2880508C4","phone":"554499999999","fromMe":false,"momment":1708455444850,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"554499999999","photo":null,"broadcast":false,"participantLid":null,"forwarded":false,"type":"ReceivedCallback","fromApi":false,"pixKeyMessage":{"currency":"BRL","referenceId":"4PXRAHSIRDA","key":"pixkey","keyType":"EVP","merchantName":"Pix"}}',
     'ReceivedCallback from 554499999999: [PIX key] pixkey (EVP) · Pix',
     'payment', '[PIX key] pixkey (EVP) · Pix'),
    # Buttons and lists › Carousel
    ('Carousel',
     r'{"isStatusReply":false,"chatLid":null,"connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"554499999999","fromMe":true,"momment":1739368022130,"status":"SENT","chatName":"Nome","senderPhoto":null,"senderName":"Nome","photo":"https://","broadcast":false,"participantLid":null,"forwarded":false,"type":"ReceivedCallback","fromApi":true,"carouselMessage":{"text":"Message text","cards":[{"header":{"image":{"imageUrl":"https://","thumbnailUrl":"https://","caption":"","mimeType":"image/jpeg","viewOnce":false,"width":0,"height":0}},"message":"Carousel card message","footer":"","title":"","hydratedButtons":[{"index":0,"urlButton":{"displayText":"Button text","url":"https://"}},{"index":1,"quickReplyButton":{"displayText":"Button text","id":"2"}}]},{"header":{"image":{"imageUrl":"https://","thumbnailUrl":"https://","caption":"","mimeType":"image/jpeg","viewOnce":false,"width":0,"height":0}},"message":"Carousel card message","footer":"","title":"","hydratedButtons":[{"index":0,"urlButton":{"displayText":"Button text","url":"https://"}},{"index":1,"quickReplyButton":{"displayText":"Button text","id":"2"}}]}]}}',
     'ReceivedCallback to Nome (554499999999): [carousel] Message text 1. [image] Carousel card message [ Button text ] [ Button text ] 2. [image] Carousel card message [ Button text ] [ Button text ]',
     'carousel', '[carousel] Message text\n  1. [image] Carousel card message  [ Button text ]  [ Button text ]\n  2. [image] Carousel card message  [ Button text ]  [ Button text ]'),
    # Templates › Template (text)
    ('Template (text)',
     r'{"isStatusReply":false,"chatLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"3C67AB641C8AA0412F6A2242B4E23AC7","messageId":"702CC5F7E0A6BF4421","phone":"5544999999999","fromMe":false,"momment":1708457193876,"status":"RECEIVED","chatName":"Test Number","senderPhoto":null,"senderName":"5544999999999","photo":null,"broadcast":false,"participantLid":null,"forwarded":false,"type":"ReceivedCallback","fromApi":false,"hydratedTemplate":{"header":{},"message":"message text","footer":"message footer","title":"message title","templateId":"790118069824606","hydratedButtons":[]}}',
     'ReceivedCallback from 5544999999999: [template] message title message text message footer',
     'template', '[template] message title\nmessage text\n  message footer'),
    # Templates › Template (image)
    ('Template (image)',
     r'{"isStatusReply":false,"chatLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"3C67AB641C8AA0412F6A2242B4E23AC7","messageId":"885FF934BF100D579E","phone":"554499999999","fromMe":false,"momment":1708454725028,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"554499999999","photo":null,"broadcast":false,"participantLid":null,"forwarded":false,"type":"ReceivedCallback","fromApi":false,"hydratedTemplate":{"header":{"image":{"imageUrl":"https://example.jpeg","thumbnailUrl":"https://example.jpeg","caption":"","mimeType":"image/jpeg","viewOnce":false,"width":1600,"height":926}},"message":"message text","footer":"message footer","title":"message title","templateId":"674504507982622","hydratedButtons":[]}}',
     'ReceivedCallback from 554499999999: [template] message title [image] message text message footer',
     'template', '[template] message title\n[image]\nmessage text\n  message footer'),
    # Templates › Template (video)
    ('Template (video)',
     r'{"isStatusReply":false,"chatLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"3C67AB641C8AA0412F6A2242B4E23AC7","messageId":"0E4AD761B62E3D5EF9","phone":"5544999999999","fromMe":false,"momment":1708456287181,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"5544999999999","photo":null,"broadcast":false,"participantLid":null,"forwarded":false,"type":"ReceivedCallback","fromApi":false,"hydratedTemplate":{"header":{"video":{"videoUrl":"https://example.mp4","caption":"","mimeType":"video/mp4","width":0,"height":0,"seconds":0,"viewOnce":false}},"message":"message text","footer":"message footer","title":"message title","templateId":"938481574354947","hydratedButtons":[]}}',
     'ReceivedCallback from 5544999999999: [template] message title [video] message text message footer',
     'template', '[template] message title\n[video]\nmessage text\n  message footer'),
    # Templates › Template (document)
    ('Template (document)',
     r'{"isStatusReply":false,"chatLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"3C67AB641C8AA0412F6A2242B4E23AC7","messageId":"9D968A5FA2880508C4","phone":"554499999999","fromMe":false,"momment":1708455444850,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"554499999999","photo":null,"broadcast":false,"participantLid":null,"forwarded":false,"type":"ReceivedCallback","fromApi":false,"hydratedTemplate":{"header":{"document":{"documentUrl":"https://example.pdf","mimeType":"application/pdf"}},"message":"message text","footer":"message footer","title":"message title","templateId":"811492407484976","hydratedButtons":[]}}',
     'ReceivedCallback from 554499999999: [template] message title [document] message text message footer',
     'template', '[template] message title\n[document]\nmessage text\n  message footer'),
    # Templates › Template (location)
    ('Template (location)',
     r'{"isStatusReply":false,"chatLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"3C67AB641C8AA0412F6A2242B4E23AC7","messageId":"27BBF23E0185D363D9","phone":"554499999999","fromMe":false,"momment":1708456969808,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"554499999999","photo":null,"broadcast":false,"participantLid":null,"forwarded":false,"type":"ReceivedCallback","fromApi":false,"hydratedTemplate":{"header":{"location":{"longitude":-46.6388,"latitude":-23.5489,"name":"place name","address":"address name"}},"message":"message text","footer":"message footer","title":"message title","templateId":"1143940003434066","hydratedButtons":[]}}',
     'ReceivedCallback from 554499999999: [template] message title [location] place name message text message footer',
     'template', '[template] message title\n[location] place name\nmessage text\n  message footer'),
    # Ads › Ad message
    ('Ad message',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isGroup":false,"isEdit":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1657209752000,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"name","photo":null,"broadcast":false,"externalAdReply":{"title":"Title","body":"ad text","mediaType":1,"thumbnailUrl":"https://","sourceType":"ad","sourceId":"23722824350495506","ctwaClid":"Aff-niaAw7V94N8LGd79Vjr43TlJD4UnoBdpZJQ3LzABitbbG6wgKBSVOth4EN0IDr9glsKWjm2LBaFrJG3Nb0ILxP49ZtossVBNzlS8cFXBvv2ow7gNw","sourceUrl":"https://","containsAutoReply":false,"renderLargerThumbnail":true,"showAdAttribution":true},"messageExpirationSeconds":0,"forwarded":false,"type":"ReceivedCallback","text":{"message":"received message","description":"ad text","title":"title","url":"https://","thumbnailUrl":"https://"}}',
     'ReceivedCallback from name (5544999999999): received message',
     'text', 'received message'),
    # Products and orders › Product
    ('Product',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632233527000,"status":"RECEIVED","senderPhoto":"https://","senderName":"5544999999999","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","product":{"productImage":"https://","businessOwnerJid":"5544999999999","currencyCode":"BRL","productId":"99999999999999999999","description":"","productImageCount":1,"price":1,"url":"","retailerId":"","firstImageId":"","title":"name"}}',
     'ReceivedCallback from 5544999999999: [product] name · 1 BRL',
     'product', '[product] name · 1 BRL'),
    # Products and orders › Order
    ('Order',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632233527000,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"name","photo":"https://","broadcast":false,"forwarded":false,"type":"ReceivedCallback","order":{"itemCount":1,"orderId":"422508169684569","message":"","orderTitle":"name","sellerJid":"5544999999999","thumbnailUrl":"https://","token":"AR5d4yUr+DmSzeCR2kUtPEeMfS+eG0O+S/T/17B+oY1mfA==","currency":"BRL","total":2000,"subTotal":2000,"products":[{"quantity":1,"name":"nameProduct","productId":"5338924696127051","retailerId":"1242","price":2000,"currencyCode":"BRL"}]}}',
     'ReceivedCallback from name (5544999999999): [order] name · 1 item · total 2000 BRL • 1 × nameProduct',
     'order', '[order] name · 1 item · total 2000 BRL\n  • 1 × nameProduct'),
    # Products and orders › Order status update
    ('Order status update',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228925000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","reviewOrder":{"currency":"BRL","referenceId":"4N9AVI38VOB","orderRequestId":"4N9AVI38VYZ","orderStatus":"processing","paymentStatus":"pending","total":605,"subTotal":600,"discount":10,"shipping":5,"tax":10,"products":[{"name":"order 1","quantity":2,"isCustomItem":true,"productId":"custom-item-4N9AVI38WI1","value":150}]}}',
     'ReceivedCallback from name (5544999999999): [order update] 4N9AVI38VOB: order processing, payment pending · total 605 BRL • 2 × order 1',
     'order', '[order update] 4N9AVI38VOB: order processing, payment pending · total 605 BRL\n  • 2 × order 1'),
    # Products and orders › Order payment update
    ('Order payment update',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228925000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","reviewAndPay":{"type":"physical-goods","currency":"BRL","referenceId":"4N9AVI38VOB","orderRequestId":"4N9AVI38VYZ","orderStatus":"pending","paymentStatus":"pending","total":605,"subTotal":600,"discount":10,"shipping":5,"tax":10,"products":[{"name":"order 1","quantity":2,"isCustomItem":true,"productId":"custom-item-4N9AVI38WI1","value":150}]}}',
     'ReceivedCallback from name (5544999999999): [order payment] 4N9AVI38VOB: order pending, payment pending · total 605 BRL • 2 × order 1',
     'order', '[order payment] 4N9AVI38VOB: order pending, payment pending · total 605 BRL\n  • 2 × order 1'),
    # Payments › Payment request
    ('Payment request',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632229683000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","requestPayment":{"value":1,"currencyCode":"BRL","expiration":1632834482000,"requestPhone":"5544999999999","paymentInfo":{"receiverPhone":"5544999999999","value":1,"currencyCode":"BRL","status":"WAITING","transactionStatus":"COLLECT_SUCCESS"}}}',
     'ReceivedCallback from name (5544999999999): [payment request] 1 BRL (WAITING)',
     'payment', '[payment request] 1 BRL (WAITING)'),
    # Payments › Payment sent
    ('Payment sent',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632230512000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","sendPayment":{"paymentInfo":{"receiverPhone":"5544999999999","value":1,"currencyCode":"BRL","status":"COMPLETE","transactionStatus":"SUCCESS"}}}',
     'ReceivedCallback from name (5544999999999): [payment sent] 1 BRL to 5544999999999 (COMPLETE)',
     'payment', '[payment sent] 1 BRL to 5544999999999 (COMPLETE)'),
    # Events › Event
    ('Event',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":true,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"120363019502650977-group","fromMe":false,"momment":1632228638000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","event":{"name":"Event name","description":"Event description","canceled":false,"joinLink":"https://call.whatsapp.com/video/v9123XNFG50L6iO79NddXNvKQr6bb3","scheduleTime":1716915653,"location":{}}}',
     'ReceivedCallback from name (120363019502650977-group): [event] Event name Event description 2024-05-28 17:00 UTC https://call.whatsapp.com/video/v9123XNFG50L6iO79NddXNvKQr6bb3',
     'event', '[event] Event name\nEvent description\n  2024-05-28 17:00 UTC\n  https://call.whatsapp.com/video/v9123XNFG50L6iO79NddXNvKQr6bb3'),
    # Events › Event response
    ('Event response',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":true,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"120363019502650977-group","fromMe":false,"momment":1632228638000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","eventResponse":{"response":"GOING","responseFrom":"554499999999","time":1714423417000,"referencedMessage":{"messageId":"D2D612289D9E8F62307D72409A8D9DC3","fromMe":false,"phone":"120363239161320697-group","participant":"554499999988"}}}',
     'ReceivedCallback from name (120363019502650977-group): [event response] going to D2D612289D9E8F62307D72409A8D9DC3',
     'event', '[event response] going to D2D612289D9E8F62307D72409A8D9DC3'),
    # Other interactions › Pin message
    ('Pin message',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":true,"momment":1632228955000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","pinMessage":{"action":"pin","pinDurationInSecs":604800,"referencedMessage":{"messageId":"3EB0796DC6B777C0C7CD","fromMe":true,"phone":"554499999999","participant":null}}}',
     'ReceivedCallback to name (5544999999999): [pinned] message 3EB0796DC6B777C0C7CD for 7 days',
     'pin', '[pinned] message 3EB0796DC6B777C0C7CD for 7 days'),
    # Status and profile › Text status reply
    ('Text status reply',
     r'{"isStatusReply":true,"chatLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1779134507000,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"name","photo":"https://","broadcast":false,"participantLid":null,"referenceMessageId":"3EB054C12BAAC70228AAB6","messageExpirationSeconds":0,"forwarded":false,"type":"ReceivedCallback","fromApi":false,"text":{"message":"test"}}',
     'ReceivedCallback from name (5544999999999): test',
     'text', '↪ reply to 3EB054C12BAAC70228AAB6\ntest'),
    # Status and profile › Image status reply
    ('Image status reply',
     r'{"isStatusReply":true,"chatLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1779134507000,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"name","photo":"https://","broadcast":false,"participantLid":null,"referenceMessageId":"3EB054C12BAAC70228AAB6","messageExpirationSeconds":0,"forwarded":false,"type":"ReceivedCallback","fromApi":false,"text":{"message":"test"},"statusImage":{"imageUrl":"https://","thumbnailUrl":"https://","caption":"teste","mimeType":"image/jpeg","width":960,"height":1280}}',
     'ReceivedCallback from name (5544999999999): test',
     'text', '↪ reply to your status [image] teste\ntest'),
    # Status and profile › Video status reply
    ('Video status reply',
     r'{"isStatusReply":true,"chatLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1779134507000,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"name","photo":"https://","broadcast":false,"participantLid":null,"referenceMessageId":"3EB054C12BAAC70228AAB6","messageExpirationSeconds":0,"forwarded":false,"type":"ReceivedCallback","fromApi":false,"text":{"message":"test"},"statusVideo":{"videoUrl":"https://f004.backblazeb2.com/file/temp-file-download/instances/3FXXXXXXXXXXXXXXXXXXXXXXXF/3XXXXXXXXXXXXXXXX64/9bXXXXXPu_WXXXXXYgcA==.mp4","caption":"Teste","mimeType":"video/mp4"}}',
     'ReceivedCallback from name (5544999999999): test',
     'text', '↪ reply to your status [video] Teste\ntest'),
    # Status and profile › Audio status reply
    ('Audio status reply',
     r'{"isStatusReply":true,"chatLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1779134507000,"status":"RECEIVED","chatName":"name","senderPhoto":null,"senderName":"name","photo":"https://","broadcast":false,"participantLid":null,"referenceMessageId":"3EB054C12BAAC70228AAB6","messageExpirationSeconds":0,"forwarded":false,"type":"ReceivedCallback","fromApi":false,"text":{"message":"test"},"statusAudio":{"audioUrl":"https://f004.backblazeb2.com/file/temp-file-download/instances/3FXXXXXXXXXXXXXXXXXXXXXXXF/3XXXXXXXXXXXXXXXX64/dXXXXXXXXXXXXXXXXQ==.ogg","mimeType":"audio/ogg; codecs=opus"}}',
     'ReceivedCallback from name (5544999999999): test',
     'text', '↪ reply to your status [audio]\ntest'),
    # Broadcast list › Broadcast list
    ('Broadcast list',
     r'{"isStatusReply":false,"chatLid":null,"connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"3C67AB641C8AA0412F6A2242B4E23AC7","messageId":"702CC5F7E0A6BF4421","phone":"1774895799-broadcast","fromMe":true,"momment":1774895725000,"status":"RECEIVED","broadcast":true,"type":"ReceivedCallback","broadcastRecipients":["126104585119999","138955211189999"],"text":{"message":"Broadcast list message test"}}',
     'ReceivedCallback to 1774895799-broadcast: Broadcast list message test',
     'text', 'Broadcast list message test'),
    # Broadcast list › Waiting message
    ('Waiting message',
     r'{"isStatusReply":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","momment":1736797729000,"status":"RECEIVED","fromMe":true,"phone":"5544999999999","chatName":"chat","type":"ReceivedCallback","waitingMessage":true,"viewOnce":true}',
     'ReceivedCallback to 5544999999999: [waiting for this message]',
     'waiting', '[waiting for this message]'),
    # Channels › Channel admin invite
    ('Channel admin invite',
     r'{"isStatusReply":false,"senderLid":"81896604192873@lid","connectedPhone":"554499999999","waitingMessage":false,"isEdit":false,"isGroup":false,"isNewsletter":false,"instanceId":"A20DA9C0183A2D35A260F53F5D2B9244","messageId":"A20DA9C0183A2D35A260F53F5D2B9244","phone":"5544999999999","fromMe":false,"momment":1632228925000,"status":"RECEIVED","chatName":"name","senderPhoto":"https://","senderName":"name","participantPhone":null,"participantLid":null,"photo":"https://","broadcast":false,"type":"ReceivedCallback","newsletterAdminInvite":{"newsletterId":"120363166555745933@newsletter","newsletterName":"Test","text":"I want to invite you to be an admin of my channel","inviteExpiration":1706809668}}',
     'ReceivedCallback from name (5544999999999): [channel admin invite] Test I want to invite you to be an admin of my channel',
     'invite', '[channel admin invite] Test\nI want to invite you to be an admin of my channel'),
]


# What the issue found shown as "(no content)": each must now say what it is.
ONCE_EMPTY = {
    "Button with image", "Button with video", "OTP button", "PIX button", "Carousel", "Template (text)",
    "Template (image)", "Template (video)", "Template (document)", "Template (location)", "Product", "Order",
    "Order status update", "Order payment update", "Payment request", "Payment sent", "Event", "Event response",
    "Pin message", "Channel admin invite", "Waiting message",
}


@pytest.mark.parametrize(("title", "body", "summary", "kind", "text"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
async def test_each_documented_message_reads_as_text(store, title, body, summary, kind, text):
    payload = json.loads(body)
    event_kind, event_summary, ids = classify(payload)
    assert (event_kind, event_summary) == ("ReceivedCallback", summary)
    assert "(no content)" not in event_summary and payload["messageId"] in ids
    await store.append(record(payload, body=body.encode(), kind=event_kind, summary=event_summary, message_ids=ids,
                              path="/delivery"))
    [message] = [m for chat in Inbox(store).conversations() for m in Inbox(store).thread(chat.chat_id, 5)]
    assert (message.kind, message.body, message.message_id) == (kind, text, payload["messageId"])


def test_the_examples_cover_what_was_once_empty():
    assert ONCE_EMPTY <= {e[0] for e in EXAMPLES}


def test_an_otp_template_shows_its_code():
    [otp] = [e for e in EXAMPLES if e[0] == "OTP button"]
    assert "otp123" in otp[2] and "otp123" in otp[4]


@pytest.mark.parametrize(("title", "target"), [("Event response", "D2D612289D9E8F62307D72409A8D9DC3"),
                                               ("Pin message", "3EB0796DC6B777C0C7CD")])
def test_answers_and_pins_link_the_message_they_are_about(title, target):
    [example] = [e for e in EXAMPLES if e[0] == title]
    assert target in classify(json.loads(example[1]))[2]
