// See package.json: msgpackr catches this and decodes in JavaScript.
throw new Error('msgpackr-extract is not installed in this build of xrate');
