// The terminal as a chat: posts print as blocks of text, updates print the new state (a terminal cannot edit
// what it already printed), thread replies are indented.

import { renderText } from './text.ts';
import type { ChatAdapter, ChatMessage, ChatRef } from './types.ts';

export function createConsoleAdapter(write: (s: string) => void): ChatAdapter {
  let n = 0;
  return {
    async post(dest, msg: ChatMessage): Promise<ChatRef> {
      n += 1;
      const body = renderText(msg);
      write(dest.threadTs ? body.replace(/^/gm, '  | ') : body);
      return { channel: dest.channel, ts: `console.${n}` };
    },
    async update(_ref, msg) {
      write(renderText(msg));
    },
    async upload(dest, file) {
      const bytes =
        file.encoding === 'base64' ? Buffer.from(file.content, 'base64').length : Buffer.byteLength(file.content);
      write(`${dest.threadTs ? '  | ' : ''}[file ${file.filename}: ${bytes} bytes]`);
    },
  };
}
