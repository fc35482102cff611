import { describe, expect, it } from 'vitest';

import { filledTemplate, fillText, templateSendProblems } from './template-send.js';

describe('template send check', () => {
  it('takes an authentication button as created (OTP) or as listed (a URL with the code variable)', () => {
    const code = { body: ['1'], buttons: [{ index: 0, subType: 'url' as const, value: '1' }] };
    const body = { type: 'BODY', text: '*{{1}}* is your verification code.' };
    const asCreated = [body, { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE' }] }];
    const asListed = [
      body,
      {
        type: 'BUTTONS',
        buttons: [
          {
            type: 'URL',
            text: 'Copy code',
            url: 'https://www.whatsapp.com/otp/code/?otp_type=COPY_CODE&code=otp{{1}}',
          },
        ],
      },
    ];
    expect(templateSendProblems(asCreated, code)).toEqual([]);
    expect(templateSendProblems(asListed, code)).toEqual([]);
    expect(templateSendProblems(asListed, { body: ['1'] })[0]?.message).toMatch(
      /button 0 \(URL with a variable, subType url\)/,
    );
  });

  it('counts distinct variables (a repeated one once), and a header without format is text', () => {
    const components = [
      { type: 'header', text: 'For {{1}}' },
      { type: 'body', text: 'Hi {{1}}, {{2}} and {{1}} again' },
    ];
    expect(templateSendProblems(components, { header: ['a'], body: ['a', 'b'] })).toEqual([]);
    expect(templateSendProblems(components, { body: ['a', 'b', 'c'] }).map((p) => p.path)).toEqual([
      'content.template.components.header',
      'content.template.components.body',
    ]);
  });

  it('takes no value for a URL button without a variable, nor a header value without a header', () => {
    const components = [
      { type: 'BODY', text: 'Hi' },
      { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Shop', url: 'https://shop.example.com/' }] },
    ];
    const problems = templateSendProblems(
      components,
      {
        header: ['x'],
        buttons: [{ index: 0, subType: 'url', value: 'x' }],
      },
      'recipients.3.components',
    );
    expect(problems).toEqual([
      { path: 'recipients.3.components.header', message: "is not allowed: the template's header has no variables" },
      {
        path: 'recipients.3.components.buttons.0',
        message: 'is not allowed: button 0 (URL without a variable) takes no value',
      },
    ]);
  });

  it('fills positional variables by number and named ones in order of appearance; a missing one stays', () => {
    expect(fillText('{{2}} before {{1}}', ['one', 'two'])).toBe('two before one');
    expect(fillText('Hi {{name}}, order {{order}}', ['Ana'])).toBe('Hi Ana, order {{order}}');
    expect(
      filledTemplate(
        [
          { type: 'HEADER', format: 'IMAGE' },
          { type: 'BODY', text: 'Hi {{1}}' },
          { type: 'FOOTER', text: 'Shop' },
          {
            type: 'BUTTONS',
            buttons: [
              { type: 'QUICK_REPLY', text: 'Stop' },
              { type: 'PHONE_NUMBER', text: 'Call' },
            ],
          },
        ],
        { body: ['Ana'] },
      ),
    ).toEqual({ header: '[image]', body: 'Hi Ana', footer: 'Shop', buttons: ['Stop', 'Call'] });
  });
});
