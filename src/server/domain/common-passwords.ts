// The most used passwords of public breach corpora (8 characters and longer, since shorter ones are refused anyway),
// lower-cased; a sign-up or reset with one of these is refused because guessing lists start with them.
const LIST = `
password 12345678 123456789 1234567890 qwertyuiop 11111111 00000000 iloveyou1 password1 password12 password123
password1234 passw0rd p@ssw0rd p@ssword qwerty123 qwerty1234 qwertyui qwerty12 1q2w3e4r 1q2w3e4r5t 1q2w3e4r5t6y
1qaz2wsx 1qazxsw2 zaq12wsx zaq1zaq1 qazwsxedc qazwsx123 asdfghjkl asdfghjk zxcvbnm1 zxcvbnm123 abcd1234 abc12345
abcdefgh abcdefg1 abcdef123 a1b2c3d4 aa123456 aa12345678 12341234 12344321 12121212 11223344 11112222 22222222
33333333 44444444 55555555 66666666 77777777 88888888 99999999 12345679 123123123 123321123 123456788 987654321
9876543210 87654321 147258369 123654789 741852963 159357456 159753456 147852369 112233445 1234qwer 123qweasd
123qweasdzxc 1234abcd 12qwaszx iloveyou iloveyou2 iloveyou! loveyou1 sunshine sunshine1 princess princess1
football football1 baseball baseball1 basketball superman superman1 batman123 starwars starwars1 pokemon1
whatever whatever1 trustno1 letmein1 letmein123 welcome1 welcome123 welcome12 computer computer1 internet
michelle jennifer jessica1 charlie1 christian chocolate chocolate1 butterfly butterfly1 elephant sweetheart
sweetie1 lovely123 loveme123 babygirl1 babygirl angel123 angelina alexander alexandra benjamin cameron1
danielle dolphins football12 freedom1 hello123 hello1234 helloworld hunter22 jordan23 liverpool liverpool1
chelsea1 arsenal1 manchester marlboro mercedes midnight monkey123 mustang1 nicole123 patricia qwerty12345
rainbow1 scorpion shadow12 soccer12 spiderman stephanie snoopy12 summer2020 summer2021 summer2022 summer2023
summer2024 summer2025 winter2020 winter2021 winter2022 winter2023 winter2024 winter2025 spring2024 autumn2024
thomas123 tigger12 victoria vanessa1 william1 yankees1 zxcvbnm123 zxcvbnm! 1234567a 1234567q 12345678a 12345678q
123456789a 123456789q 1234567890a q1w2e3r4 q1w2e3r4t5 q1w2e3r4t5y6 qwe123qwe qweasdzxc qweqweqwe qwertyuiop1
asdasdasd asdf1234 asdfasdf asdfghjkl1 zxczxczxc 1111111111 0000000000 1212121212 5555555555 aaaaaaaa
administrator admin123 admin1234 admin12345 adminadmin root1234 rootroot changeme changeme1 default1 guest123
secret123 secret12 testtest test1234 test12345 tester123 master123 mastermind masterkey passpass password!
password1! password01 password2 password3 password11 password99 password2020 password2023 password2024 pass1234
pass12345 mypassword mypassword1 newpassword letmein! access14 blahblah bigdaddy corvette diamond1 dragon12
dragon123 firebird freedom! google123 iloveu123 jesus123 jesuschrist killer12 lakers24 michael1 naruto123
pakistan pokemon123 samsung1 samsung123 shadow123 starwars! superstar tinkerbell unicorn1 westside whatever!
wolverine yellow12 zxcvbnma 1password 123password qwertz123 qwertzui azerty123 azertyuiop wallet123 bitcoin1
bitcoin123 crypto123 ethereum blockchain 88888888a 66666666a 0987654321 09876543 1029384756 myspace1 facebook1
facebook123 instagram linkedin1 twitter1 youtube1 gmail123 hotmail1 yahoo123 iloveyou12 loveyou123 lovelove
mylove123 forever1 friends1 family123 qwerty!@# !qaz2wsx 1qaz!qaz 1q2w3e 1q2w3e4r! p@ssw0rd1 p@ssw0rd! pa$$w0rd
pa55word pa55w0rd passw0rd1 passw0rd! 1234567890q qwertyqwerty 12345qwert 123abc123 abc123abc abcabc123 a123456789
qq123456 zz123456 xx123456 1a2b3c4d5e 123456aa 123456abc 123456qwe 123456789z zxcv1234 ghbdtn123 йцукенгш
пароль123 qwerty007 agent007 james007 bond0007
`;

export const COMMON_PASSWORDS: ReadonlySet<string> = new Set(LIST.split(/\s+/).filter((word) => word.length > 0));
