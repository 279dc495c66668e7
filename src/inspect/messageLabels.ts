/**
 * How the document and the prompts name a message send: plain data, free of the parser, so `init` and the design
 * model can say "sends an e-mail through nodemailer" without loading ts-morph.
 */
export type MessageChannel = 'email' | 'sms' | 'push';

export const MESSAGE_LABELS: Readonly<Record<string, { label: string; channel: MessageChannel }>> = {
  nodemailer: { label: 'nodemailer', channel: 'email' },
  sendgrid: { label: 'SendGrid', channel: 'email' },
  resend: { label: 'Resend', channel: 'email' },
  postmark: { label: 'Postmark', channel: 'email' },
  mailgun: { label: 'Mailgun', channel: 'email' },
  ses: { label: 'Amazon SES', channel: 'email' },
  twilio: { label: 'Twilio', channel: 'sms' },
  firebase: { label: 'Firebase Cloud Messaging', channel: 'push' },
  'web-push': { label: 'web-push', channel: 'push' },
};

const CHANNEL_WORDS: Record<MessageChannel, string> = { email: 'an e-mail', sms: 'an SMS', push: 'a push notification' };

export function libraryLabel(library: string): string {
  return Object.hasOwn(MESSAGE_LABELS, library) ? MESSAGE_LABELS[library]!.label : library;
}

export function channelWords(channel: string): string {
  return Object.hasOwn(CHANNEL_WORDS, channel) ? CHANNEL_WORDS[channel as MessageChannel] : 'a message';
}

/** "sends an e-mail through nodemailer". */
export function messagePhrase(library: string, channel: string): string {
  return `sends ${channelWords(channel)} through ${libraryLabel(library)}`;
}

/** The same, for a library as inspection names it. */
export function libraryPhrase(library: string): string {
  return messagePhrase(library, Object.hasOwn(MESSAGE_LABELS, library) ? MESSAGE_LABELS[library]!.channel : '');
}
