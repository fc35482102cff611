// The portal's Embedded Signup page (decision 0076): loads the provider's JS SDK, starts its
// Embedded Signup (v4) on the button, collects the login's code (FB.login's callback) and the
// session's ids (the SDK's WA_EMBEDDED_SIGNUP message event, from the provider's origins only), and
// posts them with the PIN to this page's form. The server does the rest.
(function () {
  'use strict';
  var form = document.getElementById('signup-form');
  if (!form) return;
  var start = document.getElementById('signup-start');
  var status = document.getElementById('signup-status');
  // The provider's pages, and this page itself (an SDK stand-in, such as the emulator's, posts here).
  var origins = (form.dataset.origins || '').split(' ').concat([window.location.origin]);
  var got = { code: null, session: null };
  var say = function (text) {
    status.textContent = text;
  };

  function finish() {
    if (!got.code || !got.session) return;
    form.elements.code.value = got.code;
    form.elements.wabaId.value = got.session.waba_id || '';
    form.elements.phoneNumberId.value = got.session.phone_number_id || '';
    form.elements.businessId.value = got.session.business_id || '';
    say('Finishing: linking your number…');
    form.submit();
  }

  window.addEventListener('message', function (event) {
    if (origins.indexOf(event.origin) === -1 || typeof event.data !== 'string') return;
    var data;
    try {
      data = JSON.parse(event.data);
    } catch {
      return;
    }
    if (!data || data.type !== 'WA_EMBEDDED_SIGNUP') return;
    if (data.event === 'CANCEL') {
      say('Sign-in cancelled' + (data.data && data.data.current_step ? ' at ' + data.data.current_step : '') + '.');
      start.disabled = false;
      return;
    }
    if (data.event === 'ERROR') {
      say('The provider reported an error: ' + ((data.data && data.data.error_message) || 'unknown') + '.');
      start.disabled = false;
      return;
    }
    if (data.data && data.data.waba_id && data.data.phone_number_id) {
      got.session = data.data;
      finish();
    } else if (data.event === 'FINISH_ONLY_WABA' || data.event === 'FINISH') {
      say('The sign-in finished without a phone number: add a number, then link it again.');
      start.disabled = false;
    }
  });

  window.fbAsyncInit = function () {
    window.FB.init({ appId: form.dataset.appId, autoLogAppEvents: true, xfbml: true, version: 'v23.0' });
    start.disabled = false;
    say('Ready.');
  };

  start.addEventListener('click', function () {
    if (!/^[0-9]{6}$/.test(form.elements.pin.value)) {
      say('Choose a six-digit PIN first.');
      form.elements.pin.focus();
      return;
    }
    start.disabled = true;
    say('Waiting for the provider’s sign-in…');
    window.FB.login(
      function (response) {
        if (response && response.authResponse && response.authResponse.code) {
          got.code = response.authResponse.code;
          finish();
        } else {
          say('Sign-in not completed.');
          start.disabled = false;
        }
      },
      {
        config_id: form.dataset.configId,
        response_type: 'code',
        override_default_response_type: true,
        extras: { setup: {}, featureType: '', sessionInfoVersion: '3', version: 'v4' },
      },
    );
  });

  var script = document.createElement('script');
  script.src = form.dataset.sdkUrl;
  script.async = true;
  script.defer = true;
  script.crossOrigin = 'anonymous';
  script.onerror = function () {
    say('The provider’s sign-in could not be loaded.');
  };
  document.body.appendChild(script);
})();
